// S2 at any version, derived from the change record: for each key, the newest change on the
// branch that ends at the version; processed items are those that runs on that branch read,
// and `processedSeq` the timeline position through which they read. A key whose newest change
// is erased (a tombstone) has no entry. This walks the history: it serves old versions (and the test that checks the kept state of heads against it).
UNWIND $versions AS vid
// (the plan starts from the index seek on h; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes. A
// version of a deleted session (ERASED_FROM) is still a fork's starting point: its memory is
// what its tombstones leave.)
MATCH (h:Version {id: vid})-[:OF]->(ss:Session)-[:OF_AGENT|ERASED_FROM]->(:Agent)
      -[:IN_ORG]->({id: $org})
USING INDEX h:Version(id)
WHERE $person IS NULL OR EXISTS { (ss)-[:WITH]->(:Person {id: $person}) }
CALL (h) {
  MATCH (h)-[:PARENT*0..]->(v:Version)<-[:AT]-(c:Change)
  WITH c, v ORDER BY v.depth DESC
  WITH c.key AS key, head(collect(c)) AS latest
  // (an erased entry is in no view: its change is a tombstone)
  WHERE NOT coalesce(latest.erased, false)
  CALL (latest) {
    OPTIONAL MATCH (latest)-[:CITES]->(i:Item)
    WITH i ORDER BY i.seq
    RETURN collect(i {.uid, .id, .type, .role, .content, .app, .author, .at, .seq}) AS sources
  }
  RETURN collect(latest {.key, .content, .kind, .status, updatedAt: latest.at,
                         change: latest.id, sources: sources}) AS entries
}
CALL (h) {
  OPTIONAL MATCH (h)-[:PARENT*0..]->(:Version)<-[:AT]-(:Run)-[:READ]->(i:Item)
  WITH DISTINCT i ORDER BY i.seq
  RETURN collect(i.id) AS processed, coalesce(max(i.seq), 0) AS processedSeq
}
RETURN vid, entries, processed, processedSeq
