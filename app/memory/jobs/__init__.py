"""The durable jobs a turn queues: consolidation runs (S7-S11) and learning jobs (A2-A6), their
runner and the prompts they send."""
