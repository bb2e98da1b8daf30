// The turn of each item, by the item's uid (GraphQL's item -> turn).
UNWIND $uids AS uid
MATCH (:Item {uid: uid})-[:IN_TURN]->(t:Turn)
RETURN uid, t.id AS turn
