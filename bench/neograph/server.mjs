// The benchmark's peer: our graph through @neo4j/graphql and Apollo Server, on the same Neo4j.
// Env: NEO4J_URI, NEO4J_USER, NEO4J_PASSWORD, PORT. A second listener on PORT+1 answers
// GET /statements with how many Cypher statements the library has run so far (counted at the
// driver: every transaction.run of every session), so the bench can divide by its requests.
import { readFileSync } from "node:fs";
import http from "node:http";
import { ApolloServer } from "@apollo/server";
import { startStandaloneServer } from "@apollo/server/standalone";
import { Neo4jGraphQL } from "@neo4j/graphql";
import neo4j from "neo4j-driver";

let statements = 0;

function countedTx(tx) {
  const run = tx.run.bind(tx);
  tx.run = (...args) => {
    statements += 1;
    return run(...args);
  };
  return tx;
}

function countedSession(session) {
  for (const name of ["executeRead", "executeWrite"]) {
    const original = session[name].bind(session);
    session[name] = (work, config) => original((tx) => work(countedTx(tx)), config);
  }
  const begin = session.beginTransaction.bind(session);
  session.beginTransaction = (config) => countedTx(begin(config));
  const run = session.run.bind(session);
  session.run = (...args) => {
    statements += 1;
    return run(...args);
  };
  return session;
}

const driver = neo4j.driver(
  process.env.NEO4J_URI,
  neo4j.auth.basic(process.env.NEO4J_USER, process.env.NEO4J_PASSWORD),
);
const openSession = driver.session.bind(driver);
driver.session = (config) => countedSession(openSession(config));

const typeDefs = readFileSync(new URL("./typeDefs.graphql", import.meta.url), "utf8");
const schema = await new Neo4jGraphQL({ typeDefs, driver }).getSchema();
const server = new ApolloServer({ schema });
const port = Number(process.env.PORT);
const { url } = await startStandaloneServer(server, { listen: { host: "127.0.0.1", port } });

http
  .createServer((request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ statements }));
  })
  .listen(port + 1, "127.0.0.1", () => console.log(`ready ${url}`));
