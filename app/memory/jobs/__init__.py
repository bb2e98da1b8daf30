"""The durable jobs a turn queues: consolidation runs (S7-S11) and learning jobs (A2-A6), their
runner, the prompts they send, and the checks every proposed change passes."""
