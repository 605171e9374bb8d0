// The interop scenario with @stomp/stompjs over TCP through @stomp/tcp-wrapper (npm; package.json
// here pins them), written as its users write it: see tests/interop/peers.py for the modes and
// what each prints.
import crypto from "node:crypto";
import { Client } from "@stomp/stompjs";
import { TCPWrapper } from "@stomp/tcp-wrapper";

const [port, mode, ...rest] = process.argv.slice(2);
if (rest.length < 1) {
  console.error("usage: stompjs.mjs PORT scenario NAME | send DEST JSON | receive DEST");
  process.exit(2);
}

function withTimeout(promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within 10 s`)), 10000);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function connect() {
  const client = new Client({
    webSocketFactory: () => new TCPWrapper("127.0.0.1", Number(port)),
    connectHeaders: { host: "localhost", login: "", passcode: "" },
    reconnectDelay: 0,
    heartbeatIncoming: 0,
    heartbeatOutgoing: 0,
  });
  const connected = new Promise((resolve, reject) => {
    client.onConnect = () => resolve(client);
    client.onStompError = (frame) => reject(new Error(`ERROR from the broker: ${frame.headers.message}`));
    client.onWebSocketError = (error) => reject(error);
  });
  client.activate();
  return withTimeout(connected, "CONNECTED");
}

// A subscription whose messages are taken in order with next().
function subscribe(client, destination, headers = {}) {
  const waiting = [];
  const arrived = [];
  client.subscribe(
    destination,
    (message) => (waiting.length ? waiting.shift()(message) : arrived.push(message)),
    headers,
  );
  return {
    next() {
      if (arrived.length) return Promise.resolve(arrived.shift());
      return withTimeout(new Promise((resolve) => waiting.push(resolve)), "MESSAGE");
    },
  };
}

function publishWithReceipt(client, params, receipt) {
  const received = new Promise((resolve) => client.watchForReceipt(receipt, resolve));
  client.publish({ ...params, headers: { ...params.headers, receipt } });
  return withTimeout(received, "RECEIPT");
}

const big = new TextEncoder().encode("0123456789abcdef".repeat(65536));
const nul = new TextEncoder().encode("nul\0in\0the\0middle");

async function scenario(name) {
  const client = await connect();
  const select = `/queue/${name}.select`;
  client.publish({ destination: select, body: "red-1", headers: { colour: "red" } });
  client.publish({ destination: select, body: "blue-1", headers: { colour: "blue" } });
  const receipt = await publishWithReceipt(
    client, { destination: select, body: "red-2", headers: { colour: "red" } }, "sent-3");
  const selected = subscribe(client, select, { ack: "client-individual", selector: "colour = 'red'" });
  const bodies = [];
  for (let i = 0; i < 2; i++) {
    const message = await selected.next();
    bodies.push(message.body);
    if (message.body === "red-2") message.ack();
  }

  const tx = `/queue/${name}.tx`;
  const aborted = client.begin("tx-aborted");
  client.publish({ destination: tx, body: "tx-aborted", headers: { transaction: aborted.id } });
  aborted.abort();
  const committed = client.begin("tx-committed");
  client.publish({ destination: tx, body: "tx-committed", headers: { transaction: committed.id } });
  committed.commit();

  const destination = `/queue/${name}.bodies`;
  const received = subscribe(client, destination);
  client.publish({ destination, binaryBody: big });
  client.publish({ destination, binaryBody: nul });
  const bigBody = Buffer.from((await received.next()).binaryBody);
  const nulBody = Buffer.from((await received.next()).binaryBody);
  await client.deactivate();
  return {
    selected: bodies,
    receipt: receipt.headers["receipt-id"] === "sent-3",
    big: { length: bigBody.length, sha256: crypto.createHash("sha256").update(bigBody).digest("hex") },
    nul_hex: nulBody.toString("hex"),
  };
}

async function sendOne(destination, json) {
  const message = JSON.parse(json);
  const client = await connect();
  await publishWithReceipt(client, { destination, body: message.body, headers: message.headers }, "crossing");
  await client.deactivate();
  return { sent: true };
}

async function receiveOne(destination) {
  const client = await connect();
  const message = await subscribe(client, destination).next();
  await client.deactivate();
  return { headers: message.headers, body: message.body };
}

const modes = { scenario, send: sendOne, receive: receiveOne };
if (!(mode in modes)) {
  console.error(`unknown mode ${mode}`);
  process.exit(2);
}
modes[mode](...rest).then(
  (result) => console.log(JSON.stringify(result)),
  (error) => {
    console.error(error.stack || String(error));
    process.exit(1);
  },
);
