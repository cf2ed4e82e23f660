# append-to-solution
# Hangs forever while being imported.
while True:
    pass
