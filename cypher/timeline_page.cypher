// A page of the timeline as it was at each version, oldest first: the items after seq $after
// (null: from the start) on the branch that ends there, at most $first + 1. A version holds
// `items`, the highest seq on its branch, and seqs only grow towards the head, so the walk back
// stops at the first version with no item after $after: a page near the head walks only the
// versions near the head, whatever forks and reverts lie behind it.
UNWIND $versions AS vid
// (the plan starts from the index seek on h; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes. A
// version of a deleted session (ERASED_FROM) is still a fork's starting point: its timeline
// is the fork's tombstones.)
MATCH (h:Version {id: vid})-[:OF]->(ss:Session)-[:OF_AGENT|ERASED_FROM]->(:Agent)
      -[:IN_ORG]->({id: $org})
USING INDEX h:Version(id)
WHERE $person IS NULL OR EXISTS { (ss)-[:WITH]->(:Person {id: $person}) }
CALL (h) {
  MATCH (h) ((:Version)-[:PARENT]->(b:Version) WHERE b.items > coalesce($after, 0))* (v:Version)
  MATCH (v)-[:ADDS]->(i:Item)
  WHERE i.seq > coalesce($after, 0)
  OPTIONAL MATCH (i)-[:IN_TURN]->(t:Turn)
  WITH i, t ORDER BY i.seq LIMIT $first + 1
  RETURN collect(i {.uid, .id, .type, .role, .content, .app, .author, .at, .seq, turn: t.id}) AS items
}
RETURN vid, items
