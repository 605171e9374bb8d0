// The jms web console: polls /api/destinations every two seconds, browses, sends and acts
// through the JSON API (jms/web/console.py). Everything shown is set as text, never as HTML.
"use strict";

const REFRESH_MS = 2000;
const PAGE = 20;
const CHART_POINTS = 30;
const state = { csrf: "", browsing: null, deadLetters: false, start: 1, nextStart: null, samples: new Map() };
const $ = (id) => document.getElementById(id);

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

function row(cells, numbers = []) {
  const tr = document.createElement("tr");
  cells.forEach((cell, index) => {
    const td = cell instanceof Node ? document.createElement("td") : element("td", cell);
    if (cell instanceof Node) td.append(cell);
    if (numbers.includes(index)) td.className = "number";
    tr.append(td);
  });
  return tr;
}

function table(headings, rows) {
  const result = element("table");
  result.append(row(headings.map((h) => element("b", h))), ...rows);
  return result;
}

class ApiError extends Error {
  constructor(message, field) { super(message); this.field = field; }
}

async function api(path, options = {}) {
  const response = await fetch(path, { credentials: "same-origin", ...options });
  let body;
  try { body = await response.json(); } catch { body = { error: `HTTP ${response.status} ${response.statusText}` }; }
  if (!response.ok) throw new ApiError(body.error || `HTTP ${response.status}`, body.field);
  return body;
}

function post(path, payload) {
  return api(path, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": state.csrf },
    body: JSON.stringify(payload),
  });
}

function clearErrors() {
  document.querySelectorAll(".error").forEach((node) => { node.textContent = ""; });
}

function showError(error, fallback = "error") {
  const target = (error.field && $(`error-${error.field}`)) || $(fallback);
  target.textContent = error.message;
}

// -- destinations, live -------------------------------------------------------------------------

function rates(destination, now) {
  const previous = state.samples.get(destination.name);
  const sample = { time: now, enqueued: destination.enqueued, dequeued: destination.dequeued, chart: previous ? previous.chart : [] };
  let inRate = 0, outRate = 0;
  if (previous && now > previous.time) {
    const seconds = (now - previous.time) / 1000;
    inRate = Math.max(0, destination.enqueued - previous.enqueued) / seconds;
    outRate = Math.max(0, destination.dequeued - previous.dequeued) / seconds;
    sample.chart = [...previous.chart, inRate].slice(-CHART_POINTS);
  }
  state.samples.set(destination.name, sample);
  return { inRate, outRate, chart: sample.chart };
}

function sparkline(values) {
  const svgNs = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(svgNs, "svg");
  svg.setAttribute("class", "chart");
  svg.setAttribute("width", "120");
  svg.setAttribute("height", "20");
  const top = Math.max(1, ...values);
  const points = values.map((value, index) => `${(index * 120) / (CHART_POINTS - 1)},${19 - (value / top) * 18}`);
  const line = document.createElementNS(svgNs, "polyline");
  line.setAttribute("points", points.join(" "));
  line.setAttribute("fill", "none");
  line.setAttribute("stroke", "#2f6fdf");
  svg.append(line);
  return svg;
}

function destinationRow(destination, now) {
  const { inRate, outRate, chart } = rates(destination, now);
  const name = element("span", destination.name);
  if (destination.dead_letter_queue) name.append(element("span", "dead letters", "badge dlq"));
  if (destination.kind !== "queue") name.append(element("span", destination.kind, "badge"));
  const tr = row(
    [name, destination.destination, destination.depth, destination.in_flight, destination.consumers,
     destination.enqueued, destination.dequeued, inRate.toFixed(1), outRate.toFixed(1), sparkline(chart)],
    [2, 3, 4, 5, 6, 7, 8],
  );
  tr.dataset.name = destination.name;
  if (destination.kind === "topic") name.append(element("span", `${destination.subscriptions} subscription(s)`, "muted"));
  else if (destination.kind !== "queue") tr.classList.add("subscription");
  if (destination.browsable) {
    tr.classList.add("browsable");
    tr.addEventListener("click", () => openBrowser(destination));
  }
  if (destination.name === state.browsing) tr.classList.add("chosen");
  return tr;
}

async function refresh() {
  try {
    const answer = await api("/api/destinations");
    const now = answer.time_ms;
    $("destinations").tBodies[0].replaceChildren(...answer.destinations.map((d) => destinationRow(d, now)));
    $("totals").textContent = `${answer.connections} connection(s), ${answer.messages_received} received, ${answer.messages_delivered} delivered over STOMP`;
    $("updated").textContent = `updated ${new Date(now).toLocaleTimeString()}`;
    $("error").textContent = "";
  } catch (error) {
    showError(error);
  } finally {
    setTimeout(refresh, REFRESH_MS);
  }
}

// -- browsing -----------------------------------------------------------------------------------

function typedTable(entries, first) {
  return table([first, "Type", "Value"], entries.map((entry, index) =>
    row([entry.name ?? index, entry.type, entry.value === null ? "null" : entry.value])));
}

function bodyView(body) {
  switch (body.type) {
    case "text": return body.text === null ? element("span", "(no body)", "muted") : element("pre", body.text);
    case "bytes": {
      const view = element("div", `${body.length} bytes`);
      view.append(element("pre", body.hex, "hex"));
      return view;
    }
    case "map": return typedTable(body.entries, "Name");
    case "stream": return typedTable(body.values, "#");
    case "object": return element("span", body.class === null ? "(no object)" : `object of class ${body.class}, ${body.size} bytes serialized (not deserialized here)`);
    default: return element("span", "(a message without a body)", "muted");
  }
}

function messageView(message) {
  const details = element("details");
  details.dataset.seq = message.seq;
  const summary = element("summary");
  if (state.deadLetters) {
    const box = element("input");
    box.type = "checkbox";
    box.className = "pick";
    box.value = message.seq;
    box.addEventListener("click", (event) => event.stopPropagation());
    summary.append(box, " ");
  }
  const headers = message.headers;
  summary.append(`#${message.seq} ${headers.JMSMessageID ?? ""} · ${message.body.type} · ${new Date(headers.JMSTimestamp).toISOString()}`);
  const remove = element("button", "Delete");
  remove.addEventListener("click", () => act(() => post("/api/delete", { destination: state.browsing, seq: message.seq }), `deleted #${message.seq}`));
  summary.append(" ", remove);
  if (state.deadLetters) {
    const back = element("button", "Move back");
    back.addEventListener("click", () => move({ seqs: [message.seq] }));
    summary.append(" ", back);
  }
  details.append(
    summary,
    element("h3", "Headers"),
    table(["Header", "Value"], Object.entries(headers).map(([name, value]) => row([name, value === null ? "" : value]))),
    element("h3", "Properties"),
    message.properties.length ? typedTable(message.properties, "Name") : element("p", "none", "muted"),
    element("h3", "Body"),
    bodyView(message.body),
  );
  return details;
}

async function browse(start) {
  clearErrors();
  const query = new URLSearchParams({ destination: state.browsing, selector: $("selector").value, start, limit: PAGE });
  try {
    const page = await api(`/api/messages?${query}`);
    state.start = start;
    state.nextStart = page.next_start;
    $("messages").replaceChildren(...(page.messages.length ? page.messages.map(messageView) : [element("p", "No messages.", "muted")]));
    $("next-page").disabled = page.next_start === null;
  } catch (error) {
    showError(error, "error-selector");
  }
}

function openBrowser(destination) {
  state.browsing = destination.name;
  state.deadLetters = destination.dead_letter_queue;
  $("browser").hidden = false;
  $("browsing").textContent = destination.name;
  $("purge").hidden = destination.kind !== "queue";
  $("dlq-actions").hidden = !destination.dead_letter_queue;
  $("action-result").textContent = "";
  $("selector").value = "";
  $("messages").replaceChildren();
  browse(1);
}

async function act(action, done) {
  clearErrors();
  try {
    const answer = await action();
    $("action-result").replaceChildren(element("span", typeof done === "function" ? done(answer) : done, "ok"));
    await browse(state.start);
  } catch (error) {
    showError(error, "action-result");
  }
}

function move(which) {
  act(() => post("/api/move", { destination: state.browsing, ...which }), (answer) =>
    `moved ${answer.moved} back` + answer.skipped.map((s) => `; #${s.seq} not moved: ${s.reason}`).join(""));
}

// -- sending ------------------------------------------------------------------------------------

async function send(event) {
  event.preventDefault();
  clearErrors();
  const payload = {
    destination: $("send-destination").value.trim(),
    type: $("send-type").value,
    body: $("send-body").value,
    properties: $("send-properties").value.split("\n").map((line) => line.trim()).filter((line) => line),
  };
  try {
    const answer = await post("/api/send", payload);
    $("send-result").replaceChildren(element("span", `sent ${answer.sent} to ${answer.destination}`, "ok"));
  } catch (error) {
    $("send-result").textContent = "";
    showError(error, "error-body");
  }
}

async function start() {
  $("browse").addEventListener("click", () => browse(1));
  $("selector").addEventListener("keydown", (event) => { if (event.key === "Enter") browse(1); });
  $("first-page").addEventListener("click", () => browse(1));
  $("next-page").addEventListener("click", () => { if (state.nextStart !== null) browse(state.nextStart); });
  $("purge").addEventListener("click", () => act(() => post("/api/purge", { destination: state.browsing }), (a) => `purged ${a.purged}`));
  $("move-selected").addEventListener("click", () =>
    move({ seqs: [...document.querySelectorAll("input.pick:checked")].map((box) => Number(box.value)) }));
  $("move-all").addEventListener("click", () => move({ all: true }));
  $("send-form").addEventListener("submit", send);
  try {
    const session = await api("/api/session");
    state.csrf = session.csrf_token;
    $("broker").textContent = `broker ${session.broker}`;
    $("user").textContent = `signed in as ${session.user}`;
  } catch (error) {
    showError(error);
    return;
  }
  refresh();
}

start();
