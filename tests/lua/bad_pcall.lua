-- catching the instruction limit does not escape it
while true do
  pcall(function() while true do end end)
end
