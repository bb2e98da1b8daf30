// A page of the heads each session ever had, oldest first (by time, then depth, then id): those
// after the key $after ([at, depth, id], or null), at most $first + 1, with what made each and
// what it added.
UNWIND $ids AS sid
// (the plan starts from the index seek on s; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (s:Session {id: sid})-[:OF_AGENT]->(:Agent)-[:IN_ORG]->({id: $org})
USING INDEX s:Session(id)
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
MATCH (s)-[:HEAD]->(head:Version)
CALL (s, head) {
  MATCH (v:Version)-[:OF]->(s)
  WHERE $after IS NULL OR v.at > $after[0]
     OR (v.at = $after[0] AND (v.depth > $after[1] OR (v.depth = $after[1] AND v.id > $after[2])))
  WITH v ORDER BY v.at, v.depth, v.id LIMIT $first + 1
  OPTIONAL MATCH (v)-[:PARENT]->(parent:Version)
  OPTIONAL MATCH (v)-[:REVERTED_FROM]->(left:Version)
  CALL (v) {
    OPTIONAL MATCH (v)-[:ADDS]->(i:Item)
    WITH i ORDER BY i.seq
    RETURN collect(i.id) AS added
  }
  WITH v, parent, left, added ORDER BY v.at, v.depth, v.id
  RETURN collect(v {.id, .cause, .at, .depth, parent: parent.id, revertedFrom: left.id,
                    added: added, current: v = head}) AS versions
}
RETURN sid, versions
