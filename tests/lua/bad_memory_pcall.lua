-- catching the memory error does not escape the limit
while true do
  pcall(string.rep, "x", 1 << 29)
end
