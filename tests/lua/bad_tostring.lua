-- an error object whose __tostring loops: the host's message handler calls it
error(setmetatable({}, { __tostring = function() while true do end end }))
