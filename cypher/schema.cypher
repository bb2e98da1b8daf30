// Constraints and indexes, applied at every start; each one IF NOT EXISTS.
CREATE CONSTRAINT org_id IF NOT EXISTS FOR (o:Org) REQUIRE o.id IS UNIQUE;
CREATE CONSTRAINT person_org_id IF NOT EXISTS FOR (p:Person) REQUIRE (p.org, p.id) IS UNIQUE;
CREATE CONSTRAINT service_org_id IF NOT EXISTS FOR (s:Service) REQUIRE (s.org, s.id) IS UNIQUE;
CREATE CONSTRAINT token_hash IF NOT EXISTS FOR (t:Token) REQUIRE t.hash IS UNIQUE;
CREATE CONSTRAINT token_id IF NOT EXISTS FOR (t:Token) REQUIRE t.id IS UNIQUE;
CREATE CONSTRAINT agent_id IF NOT EXISTS FOR (a:Agent) REQUIRE a.id IS UNIQUE;
CREATE CONSTRAINT session_id IF NOT EXISTS FOR (s:Session) REQUIRE s.id IS UNIQUE;
CREATE CONSTRAINT version_id IF NOT EXISTS FOR (v:Version) REQUIRE v.id IS UNIQUE;
CREATE CONSTRAINT item_uid IF NOT EXISTS FOR (i:Item) REQUIRE i.uid IS UNIQUE;
CREATE CONSTRAINT turn_id IF NOT EXISTS FOR (t:Turn) REQUIRE t.id IS UNIQUE;
CREATE CONSTRAINT entry_session_key IF NOT EXISTS FOR (e:Entry) REQUIRE (e.session, e.key) IS UNIQUE;
CREATE CONSTRAINT change_id IF NOT EXISTS FOR (c:Change) REQUIRE c.id IS UNIQUE;
CREATE CONSTRAINT run_id IF NOT EXISTS FOR (r:Run) REQUIRE r.id IS UNIQUE;
CREATE CONSTRAINT agent_entry_identity IF NOT EXISTS FOR (e:AgentEntry) REQUIRE (e.agent, e.key, e.owner) IS UNIQUE;
CREATE CONSTRAINT agent_change_id IF NOT EXISTS FOR (c:AgentChange) REQUIRE c.id IS UNIQUE;
CREATE INDEX agent_change_version IF NOT EXISTS FOR (c:AgentChange) ON (c.agent, c.version);
CREATE CONSTRAINT learning_job_id IF NOT EXISTS FOR (j:LearningJob) REQUIRE j.id IS UNIQUE;
CREATE INDEX learning_job_status IF NOT EXISTS FOR (j:LearningJob) ON (j.status);
CREATE INDEX change_key IF NOT EXISTS FOR (c:Change) ON (c.key);
CREATE INDEX item_id IF NOT EXISTS FOR (i:Item) ON (i.id);
// Retention finds the oldest items by time.
CREATE INDEX item_at IF NOT EXISTS FOR (i:Item) ON (i.at);
CREATE INDEX run_status IF NOT EXISTS FOR (r:Run) ON (r.status);
CREATE INDEX session_created IF NOT EXISTS FOR (s:Session) ON (s.createdAt);
CREATE INDEX agent_created IF NOT EXISTS FOR (a:Agent) ON (a.createdAt);
CREATE CONSTRAINT import_org IF NOT EXISTS FOR (i:Import) REQUIRE i.org IS UNIQUE;
CREATE INDEX importing_ref IF NOT EXISTS FOR (n:Importing) ON (n.importRef);
// Full-text search: every session Change (search keeps only the current ones) and
// every AgentEntry (which holds its current state), by key and content. Eventually consistent:
// a commit only queues its documents (a synchronous full-text index costs every write a few
// ms at commit), and search first awaits the refresh of what was queued (search_entries), so a
// search still finds what was written before it. An index whose indexConfig here differs from
// the database's is dropped and made again at start (Database.apply_schema).
CREATE FULLTEXT INDEX change_text IF NOT EXISTS FOR (c:Change) ON EACH [c.key, c.content]
  OPTIONS {indexConfig: {`fulltext.eventually_consistent`: true}};
CREATE FULLTEXT INDEX agent_entry_text IF NOT EXISTS FOR (e:AgentEntry) ON EACH [e.key, e.content]
  OPTIONS {indexConfig: {`fulltext.eventually_consistent`: true}};
