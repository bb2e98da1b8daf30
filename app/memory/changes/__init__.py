"""What a change of memory must be: the commands people send and what they may hold (S12-S17,
A7), the checks every change a model proposes passes (S9, S10), and the credentials no memory
keeps (S10)."""
