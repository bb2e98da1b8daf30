// The items each change of $changes cites, in timeline order: the sources of the session
// entries a page of search hits shows.
UNWIND $changes AS id
MATCH (c:Change {id: id})
CALL (c) {
  OPTIONAL MATCH (c)-[:CITES]->(i:Item)
  WITH i ORDER BY i.seq
  RETURN collect(i {.uid, .id, .type, .role, .content, .app, .author, .at, .seq}) AS sources
}
RETURN id, sources
