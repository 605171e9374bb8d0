// The interop scenario with Node's stompit (npm; package.json here pins it), written as its users
// write it: see tests/interop/peers.py for the modes and what each prints.
"use strict";
const crypto = require("crypto");
const stompit = require("stompit");

const [port, mode, ...rest] = process.argv.slice(2);
if (rest.length < 1) {
  console.error("usage: stompit.js PORT scenario NAME | send DEST JSON | receive DEST");
  process.exit(2);
}

function connect() {
  return new Promise((resolve, reject) => {
    const options = {
      host: "127.0.0.1",
      port: Number(port),
      connectHeaders: { host: "localhost", login: "", passcode: "", "accept-version": "1.2" },
    };
    stompit.connect(options, (error, client) => (error ? reject(error) : resolve(client)));
  });
}

// Send a frame; with receipt, resolve once the broker's RECEIPT for it came.
function send(client, headers, body, { transaction, receipt } = {}) {
  return new Promise((resolve, reject) => {
    const options = receipt ? { onReceipt: resolve, onError: reject } : undefined;
    const frame = transaction ? transaction.send(headers, options) : client.send(headers, options);
    frame.write(body);
    frame.end();
    if (!receipt) resolve();
  });
}

function bodyOf(message) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    message.on("data", (chunk) => chunks.push(chunk));
    message.on("end", () => resolve(Buffer.concat(chunks)));
    message.on("error", reject);
  });
}

// A subscription whose messages (with their bodies read) are taken in order with next().
function subscribe(client, headers) {
  const waiting = [];
  const arrived = [];
  client.subscribe(headers, (error, message) => {
    const delivery = error ? Promise.reject(error) : bodyOf(message).then((body) => ({ message, body }));
    if (waiting.length) waiting.shift()(delivery);
    else arrived.push(delivery);
  });
  return {
    next() {
      if (arrived.length) return arrived.shift();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no MESSAGE within 10 s")), 10000);
        waiting.push((delivery) => {
          clearTimeout(timer);
          resolve(delivery);
        });
      });
    },
  };
}

function disconnect(client) {
  return new Promise((resolve, reject) => client.disconnect((error) => (error ? reject(error) : resolve())));
}

const big = Buffer.from("0123456789abcdef".repeat(65536));
const nul = Buffer.from("nul\0in\0the\0middle", "latin1");

async function scenario(name) {
  const client = await connect();
  const select = `/queue/${name}.select`;
  await send(client, { destination: select, colour: "red" }, "red-1");
  await send(client, { destination: select, colour: "blue" }, "blue-1");
  // stompit names the receipt itself, and resolves here once the RECEIPT came.
  await send(client, { destination: select, colour: "red" }, "red-2", { receipt: true });
  const selected = subscribe(client, { destination: select, ack: "client-individual", selector: "colour = 'red'" });
  const bodies = [];
  for (let i = 0; i < 2; i++) {
    const { message, body } = await selected.next();
    bodies.push(body.toString());
    if (body.toString() === "red-2") client.ack(message);
  }

  const tx = `/queue/${name}.tx`;
  const aborted = client.begin("tx-aborted");
  await send(client, { destination: tx }, "tx-aborted", { transaction: aborted });
  aborted.abort();
  const committed = client.begin("tx-committed");
  await send(client, { destination: tx }, "tx-committed", { transaction: committed });
  committed.commit();

  const destination = `/queue/${name}.bodies`;
  const received = subscribe(client, { destination, id: "bodies" });
  await send(client, { destination, "content-length": big.length }, big);
  await send(client, { destination, "content-length": nul.length }, nul);
  const bigBody = (await received.next()).body;
  const nulBody = (await received.next()).body;
  // A graceful disconnect waits for every message to be acknowledged, and red-1 is left
  // unacknowledged on purpose: end the connection instead.
  client.destroy();
  return {
    selected: bodies,
    receipt: true,
    big: { length: bigBody.length, sha256: crypto.createHash("sha256").update(bigBody).digest("hex") },
    nul_hex: nulBody.toString("hex"),
  };
}

async function sendOne(destination, json) {
  const message = JSON.parse(json);
  const client = await connect();
  await send(client, { ...message.headers, destination }, message.body, { receipt: true });
  await disconnect(client);
  return { sent: true };
}

async function receiveOne(destination) {
  const client = await connect();
  const { message, body } = await subscribe(client, { destination, id: "crossing" }).next();
  await disconnect(client);
  return { headers: message.headers, body: body.toString() };
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
