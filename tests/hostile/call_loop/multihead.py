# append-to-solution
# softmax never returns; everything else is the reference.


def softmax(x, axis=-1):
    while True:
        pass
