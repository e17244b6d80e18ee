-- os is not opened in the sandbox
os.execute("touch /tmp/redtune-was-here")
return {}
