// @stomp/stompjs over the `ws` package against `jms broker --http-port` (tests/web/test_stompjs.py
// runs it with the broker's ws:// URL). It sends, subscribes with a selector and
// client-individual acknowledgement, uses receipts and a transaction (an aborted send is never
// seen, a committed one is), and prints one JSON line with what it saw; any failure exits 1.
import { Client } from "@stomp/stompjs";
import WebSocket from "ws";

const url = process.argv[2];
const TIMEOUT_MS = 15000;

function connect() {
  return new Promise((resolve, reject) => {
    const client = new Client({
      brokerURL: url,
      webSocketFactory: () => new WebSocket(url, ["v12.stomp", "v11.stomp", "v10.stomp"]),
      reconnectDelay: 0,
      heartbeatIncoming: 1000,
      heartbeatOutgoing: 1000,
      onConnect: (frame) => resolve({ client, frame }),
      onStompError: (frame) => reject(new Error(`STOMP ERROR: ${frame.headers.message}`)),
      onWebSocketError: () => reject(new Error(`WebSocket error connecting to ${url}`)),
    });
    client.activate();
  });
}

function receipt(client, publish) {
  const id = `r-${Math.random().toString(36).slice(2)}`;
  const done = new Promise((resolve) => client.watchForReceipt(id, resolve));
  publish(id);
  return done;
}

async function main() {
  const { client, frame } = await connect();
  const received = [];
  let wanted = 0;
  let allArrived;
  const arrived = new Promise((resolve) => { allArrived = resolve; });
  await receipt(client, (id) => client.subscribe("/queue/orders", (message) => {
    received.push({ body: message.body, color: message.headers.color, redelivered: message.headers.redelivered });
    message.ack();
    if (received.length === wanted) allArrived();
  }, { ack: "client-individual", selector: "color = 'red'", receipt: id }));

  wanted = 2;
  await receipt(client, (id) => client.publish({ destination: "/queue/orders", body: "red one", headers: { color: "red", receipt: id } }));
  await receipt(client, (id) => client.publish({ destination: "/queue/orders", body: "blue one", headers: { color: "blue", receipt: id } }));

  const aborted = client.begin();
  client.publish({ destination: "/queue/orders", body: "aborted red", headers: { color: "red", transaction: aborted.id } });
  aborted.abort();
  const committed = client.begin();
  client.publish({ destination: "/queue/orders", body: "committed red", headers: { color: "red", transaction: committed.id } });
  committed.commit();

  await Promise.race([arrived, new Promise((_, reject) => setTimeout(() => reject(new Error(`only ${JSON.stringify(received)} arrived`)), TIMEOUT_MS))]);
  await new Promise((resolve) => setTimeout(resolve, 300));  // nothing more (the aborted send) may come
  await receipt(client, (id) => client.publish({ destination: "/queue/acked", body: "done", headers: { receipt: id } }));
  console.log(JSON.stringify({ version: frame.headers.version, server: frame.headers.server, received }));
  await client.deactivate();
}

const watchdog = setTimeout(() => { console.error("timed out"); process.exit(1); }, 2 * TIMEOUT_MS);
main().then(() => { clearTimeout(watchdog); process.exit(0); }, (error) => { console.error(error.message); process.exit(1); });
