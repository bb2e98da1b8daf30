// The newest finished erasure of person $person of the org: what a request to erase them
// again answers once nothing of them is left.
MATCH (er:Erasure {org: $org, person: $person, status: 'done'})
RETURN er {.id, .person, .at, .sessions, .items, .entries, .agentEntries, .changes,
           .jobs} AS erasure
ORDER BY er.at DESC
LIMIT 1
