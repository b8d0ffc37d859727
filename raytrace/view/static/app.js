// raytrace view: the page's script. State arrives as server-sent events ("state", the JSON
// of Session.state()); the image is fetched as PNG when a new frame (or exposure) is wanted;
// controls are JSON POSTs. The <img> carries data-frame (the id of the frame it shows) and
// data-exposure once it has loaded, so that scripts and tests can tell what is on screen.
// Every request but the page's own files carries the session's secret token, read from the
// page's address (?token=..., as raytrace view prints it): as the X-Raytrace-Token header
// on fetch() and as a query parameter where a request cannot have headers (the event stream).
"use strict";

const $ = (id) => document.getElementById(id);
const TOKEN = new URLSearchParams(location.search).get("token") || "";
const HEADERS = {"X-Raytrace-Token": TOKEN};
const withToken = (path) => `${path}${path.includes("?") ? "&" : "?"}token=${encodeURIComponent(TOKEN)}`;
const get = (path) => fetch(path, {headers: HEADERS});
const img = $("frame");
let state = null;          // the last state received
let wanted = null;         // {frame, exposure} the image should show
let loading = false;       // a PNG request is in flight
let shownUrl = null;       // object URL on screen

function exposure() { return parseFloat($("exposure").value); }

async function post(path, body) {
  const reply = await fetch(path, {method: "POST", headers: {...HEADERS, "Content-Type": "application/json"},
                                   body: JSON.stringify(body)});
  const value = await reply.json().catch(() => ({error: `HTTP ${reply.status}`}));
  if (!reply.ok) throw new Error(value.error || `HTTP ${reply.status}`);
  return value;
}

// ------------------------------------------------------------------ the image
// One loadImage at a time (it owns img.onload while it waits): started by requestImage when
// none runs, by itself when something newer was asked for, or by its retry after a failure.
function requestImage() {
  if (!state || !state.frame) return;
  wanted = {frame: state.frame.id, exposure: exposure()};
  if (!loading) loadImage();
}

async function loadImage() {
  const want = wanted;
  if (!want || (img.dataset.frame === String(want.frame) && img.dataset.exposure === String(want.exposure))) return;
  loading = true;
  let failed = false;
  try {
    const reply = await get(`/frame.png?exposure=${want.exposure}&frame=${want.frame}`);
    if (!reply.ok) throw new Error(`HTTP ${reply.status}`);
    const id = reply.headers.get("X-Frame");
    const url = URL.createObjectURL(await reply.blob());
    await new Promise((done) => { img.onload = done; img.onerror = done; img.src = url; });
    if (shownUrl) URL.revokeObjectURL(shownUrl);
    shownUrl = url;
    img.hidden = false;
    $("empty").hidden = true;
    img.dataset.frame = id;
    img.dataset.exposure = String(want.exposure);
  } catch (e) {
    failed = true;                           // busy, or the connection dropped: tried again below
  } finally {
    loading = false;
  }
  if (wanted !== want) loadImage();          // something newer was asked for meanwhile
  else if (failed) setTimeout(() => { if (!loading) loadImage(); }, 500);   // again, one at a time
}

// ------------------------------------------------------------------ state
function seconds(s) { return s < 10 ? s.toFixed(2) : s.toFixed(1); }

function showState(s) {
  state = s;
  $("scene").textContent = s.scene;
  const err = $("error");
  err.hidden = !s.error;
  err.textContent = s.error;
  const f = s.frame;
  let text = s.message || "";
  if (f) {
    const parts = [f.mode === "color" ? f.integrator : `${f.mode} view`];
    if (f.stage === "preview") parts.push("quick preview");
    else if (f.mode === "color") parts.push(`${f.spp} / ${f.spp_target} spp`);
    parts.push(`${seconds(f.seconds)} s`);
    if (f.noise !== null && f.noise !== undefined) parts.push(`noise ${(100 * f.noise).toFixed(2)} %`);
    if (f.stage === "done") parts.push("done");
    if (!f.current && !s.error) parts.push("(updating…)");
    text = parts.join(" · ") + (s.message ? ` · ${s.message}` : "");
  }
  $("status").textContent = text;
  $("report").textContent = f && f.report ? f.report : "";
  const mode = $("mode");
  if (mode.options.length !== s.modes.length) {
    mode.innerHTML = "";
    for (const m of s.modes) mode.add(new Option(m === "color" ? "colour" : m, m));
  }
  if (document.activeElement !== mode) mode.value = s.mode;
  const row = $("time-row");
  row.hidden = !s.time_range;
  if (s.time_range) {
    const t = $("time");
    t.min = s.time_range[0];
    t.max = s.time_range[1];
    if (document.activeElement !== t) t.value = s.time;
    $("time-value").textContent = Number(s.time).toFixed(2);
  }
  document.body.dataset.version = s.version;
  requestImage();
}

function connect() {
  if (!TOKEN) {
    $("status").textContent = "this address has no token: open the address that raytrace view printed " +
                              "(it ends in ?token=…)";
  }
  const events = new EventSource(withToken("/events"));
  events.addEventListener("state", (e) => {
    let s;
    try {
      s = JSON.parse(e.data);
    } catch (x) {              // never from this server (its JSON is strict); say so rather than stop
      $("status").textContent = `unreadable state from the server: ${x.message}`;
      return;
    }
    showState(s);
  });
  events.onerror = async () => {
    let why = "no live updates: has raytrace view stopped, or are too many pages open?";
    if (events.readyState === EventSource.CLOSED) {      // refused, not dropped: ask why
      try {
        const reply = await get("/state");
        if (reply.status === 403) why = (await reply.json()).error;
      } catch (e) { /* stopped: the line above says so */ }
    }
    $("status").textContent = why;
  };
}

// ------------------------------------------------------------------ camera: drag to orbit, wheel to dolly
const ORBIT_DEG_PER_PIXEL = 0.4;
const DOLLY_RANGE = [1e-3, 1e3];   // what the server takes for one dolly (raytrace/view/commands.py)
const clamp = (x, lo, hi) => Math.min(Math.max(x, lo), hi);
let drag = null;
let move = {yaw: 0, pitch: 0, dolly: 1};
let sending = false;

async function sendMove() {
  if (sending) return;
  sending = true;
  try {
    while (move.yaw !== 0 || move.pitch !== 0 || move.dolly !== 1) {
      const m = move;
      move = {yaw: 0, pitch: 0, dolly: 1};
      try {
        // a turn is the same modulo 360 degrees; the tilt stops short of the poles anyway
        const yaw = ((m.yaw + 180) % 360 + 360) % 360 - 180, pitch = clamp(m.pitch, -180, 180);
        if (yaw !== 0 || pitch !== 0) await post("/camera", {orbit: [yaw, pitch]});
        if (m.dolly !== 1) await post("/camera", {dolly: clamp(m.dolly, ...DOLLY_RANGE)});
      } catch (e) {
        $("saved").textContent = e.message;
      }
    }
  } finally {
    sending = false;
  }
}

img.addEventListener("pointerdown", (e) => {
  if (e.button !== 0) return;
  drag = {x: e.clientX, y: e.clientY};
  img.setPointerCapture(e.pointerId);
  img.classList.add("dragging");
  e.preventDefault();
});
img.addEventListener("pointermove", (e) => {
  if (drag) {
    // grab the scene: dragging right turns it right (the eye goes left), dragging down tilts it toward you
    move.yaw -= (e.clientX - drag.x) * ORBIT_DEG_PER_PIXEL;
    move.pitch += (e.clientY - drag.y) * ORBIT_DEG_PER_PIXEL;
    drag = {x: e.clientX, y: e.clientY};
    requestAnimationFrame(sendMove);
  }
  hover(e);
});
for (const end of ["pointerup", "pointercancel"]) {
  img.addEventListener(end, () => { drag = null; img.classList.remove("dragging"); });
}
img.addEventListener("wheel", (e) => {
  e.preventDefault();
  move.dolly *= Math.pow(1.1, Math.sign(e.deltaY) * Math.min(Math.abs(e.deltaY) / 100, 5));
  requestAnimationFrame(sendMove);
}, {passive: false});

// ------------------------------------------------------------------ hover: the pixel's value and names
let hovering = null;
let hoverBusy = false;

function hover(e) {
  if (!img.naturalWidth) return;
  const x = Math.floor(e.offsetX * img.naturalWidth / img.clientWidth);
  const y = Math.floor(e.offsetY * img.naturalHeight / img.clientHeight);
  hovering = {x, y};
  if (!hoverBusy) askPixel();
}

async function askPixel() {
  hoverBusy = true;
  try {
    while (hovering) {
      const {x, y} = hovering;
      hovering = null;
      const reply = await get(`/pixel?x=${x}&y=${y}`);
      const p = await reply.json();
      if (!reply.ok) { $("pixel").textContent = p.error; continue; }
      const v = p.value.map((c) => c.toPrecision(4)).join(", ");
      $("pixel").textContent = `(${p.x}, ${p.y}): ${v}` + `\nobject: ${p.object ?? "none"}` +
        `\nmaterial: ${p.material ?? "none"}`;
    }
  } finally {
    hoverBusy = false;
  }
}
img.addEventListener("pointerleave", () => { hovering = null; });

// ------------------------------------------------------------------ the other controls
$("exposure").addEventListener("input", () => {
  $("exposure-value").textContent = exposure().toFixed(1);
  requestImage();
});
$("mode").addEventListener("change", (e) => post("/mode", {mode: e.target.value}).catch((x) => {
  $("saved").textContent = x.message;
}));
let timeBusy = false;
let timeWanted = null;
$("time").addEventListener("input", async (e) => {
  timeWanted = parseFloat(e.target.value);
  $("time-value").textContent = timeWanted.toFixed(2);
  if (timeBusy) return;
  timeBusy = true;
  try {
    while (timeWanted !== null) {
      const t = timeWanted;
      timeWanted = null;
      await post("/time", {t}).catch((x) => { $("saved").textContent = x.message; });
    }
  } finally {
    timeBusy = false;
  }
});
$("reset").addEventListener("click", () => post("/camera", {reset: true}));
$("copy").addEventListener("click", async () => {
  const text = await (await get("/camera.json")).text();
  const pre = $("camera-json");
  pre.textContent = text;
  pre.hidden = false;
  try {
    await navigator.clipboard.writeText(text);
    $("saved").textContent = "camera copied: paste it over the scene's \"camera\"";
  } catch (e) {
    const range = document.createRange();
    range.selectNodeContents(pre);
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    $("saved").textContent = "camera selected: press Ctrl-C to copy it";
  }
});
for (const fmt of ["png", "exr"]) {
  $(`save-${fmt}`).addEventListener("click", async () => {
    try {
      const r = await post("/save", {format: fmt, exposure: exposure()});
      $("saved").textContent = `saved ${r.path}`;
    } catch (e) {
      $("saved").textContent = e.message;
    }
  });
}

connect();
