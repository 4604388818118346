"""The pure rules layer: guard, warning delta, write pipeline, tool catalogue.

Nothing here touches the file system, the network or a process; it talks to
the engine and to stores only through their protocols.
"""
