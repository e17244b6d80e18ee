-- a __close handler that loops runs under the limits too
do
  local x <close> = setmetatable({}, { __close = function() while true do end end })
  while true do end
end
return {}
