// The org's erasures, newest first: who asked, when, what they counted; no personal content.
MATCH (er:Erasure)-[:IN_ORG]->(:Org {id: $org})
RETURN er {.id, .person, .at, .by, .status, .sessions, .items, .entries, .agentEntries,
           .changes, .jobs} AS erasure
ORDER BY er.at DESC, er.id DESC
