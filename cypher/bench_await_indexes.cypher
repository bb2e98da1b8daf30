// Benchmark (bench/run), not used by the service: wait until the eventually consistent
// full-text indexes hold every write committed so far, so that no measured statement shares
// the machine with the index refresh a write before it left behind.
CALL db.index.fulltext.awaitEventuallyConsistentIndexRefresh()
