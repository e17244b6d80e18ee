-- there is no package library, hence no require
local io = require("io")
return {}
