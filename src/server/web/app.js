// server/web/app.js - the web calculator: fills the form from the catalogs, keeps the inputs in the URL, asks
// /v1/predict and /v1/compare as the inputs change (debounced) and draws the comparison as inline SVG.
"use strict";

const FIELDS = ["model", "gpu", "gpus", "pp", "engine", "dtype", "batch", "prompt", "gen", "spec", "region", "ci", "pue"];
const INTEGER_FIELDS = new Set(["gpus", "pp", "batch", "prompt", "gen"]);
const COMPARED_GPUS = ["h100-sxm", "h200", "a100-80gb-sxm", "l40s"];  // plus the chosen GPU
const COMPARED_COUNTS = [1, 2, 4, 8];
const DEBOUNCE_MS = 300;
// The API's messages name the CLI's flags (--gpus) or the request's keys (key 'gpus'): the page shows its own labels.
const LABELS = {
  "model": "Model", "model-config": "config.json", "gpu": "GPU", "gpus": "GPUs", "pp": "Pipeline stages", "batch": "Batch",
  "prompt": "Prompt tokens", "gen": "Generated tokens", "dtype": "Data type", "engine": "Engine", "region": "Region",
  "ci": "Grid intensity", "pue": "PUE", "spec": "Speculative decoding",
  // Not on the form, but the API may name them.
  "flash": "Flash attention", "expert-parallel": "Expert parallelism", "power-cap": "GPU power cap", "clock-mhz": "Locked SM clock",
  "spec-tokens": "Draft tokens", "spec-acceptance": "Draft acceptance",
  "scope": "Energy scope", "node": "Server node", "lifetime": "GPU lifetime", "embodied-basis": "Embodied basis",
  "embodied-kg": "Embodied CO2 per GPU", "predictor": "Predictor", "gpu-types": "Compared GPU types",
  "counts": "Compared GPU counts", "slo-ms": "Latency objective",
};
const FIGURES = ["energy-j", "energy-wh", "energy-per-1k-j", "energy-per-1k-wh", "latency-s", "ttft-ms", "tpot-ms",
                 "tokens-per-s", "co2-operational", "co2-embodied", "co2-total"];
const INTERVALS = ["energy-interval", "latency-interval", "co2-operational-interval", "co2-embodied-interval",
                   "co2-total-interval"];
let generation = 0;  // answers to older inputs are dropped
let drawn = null;    // the comparison on screen, redrawn when the page's width changes

const $ = (id) => document.getElementById(id);

// Four significant digits, whole numbers from 1,000 up (never exponent notation for the usual ranges).
function shown(x) {
  if (x === null || x === undefined || !Number.isFinite(x)) return "–";
  return Math.abs(x) >= 1000 ? x.toFixed(0) : x.toPrecision(4);
}

function intervalText(iv, unit) {
  if (!iv || iv.total === null || iv.total === undefined) return "";
  const t = iv.total;
  const [low, high] = Array.isArray(t) ? t : [t.low, t.high];
  return `80%: ${shown(low)} – ${shown(high)} ${unit}`;
}

// An API message in the form's words: "--gpus 1000 is absurd" -> "GPUs 1000 is absurd", "request: key 'batch':
// expected ..." -> "Batch: expected ..."; the rest as the API wrote it. Also names the form fields it is about.
function inFormWords(message) {
  const fields = new Set();
  const label = (name) => {
    const key = name.replace(/_/g, "-");
    if (!(key in LABELS)) return null;
    const id = key.replace(/-/g, "_");
    if (FIELDS.includes(id) || id === "model_config") fields.add(id);
    return LABELS[key];
  };
  let text = message.replace(/^(?:compare: )?(?:request: )?key '([a-z_]+)'/, (whole, key) => label(key) || whole);
  text = text.replace(/^(?:compare: )?(?:request: )?model_config\b/, () => label("model_config"));
  text = text.replace(/(^|[\s(,;'"])--([a-z][a-z0-9-]*)/g, (whole, before, flag) => {
    const name = label(flag);
    return name ? before + name : whole;
  });
  return {text, fields};
}

async function getJson(path, body) {
  const init = body === undefined ? {} : {method: "POST", headers: {"Content-Type": "application/json"},
                                          body: JSON.stringify(body)};
  const response = await fetch(path, init);
  const json = await response.json();
  if (!response.ok) throw new Error(json.error || `HTTP ${response.status}`);
  return json;
}

function fillSelect(select, items, label) {
  select.replaceChildren(...items.map((item) => {
    const option = document.createElement("option");
    option.value = item.id;
    option.textContent = label(item);
    return option;
  }));
}

async function loadCatalogs() {
  const [models, gpus, regions] = await Promise.all([getJson("/v1/models"), getJson("/v1/gpus"),
                                                     getJson("/v1/regions")]);
  fillSelect($("model"), models.models, (m) => m.id);
  fillSelect($("gpu"), gpus.gpus, (g) => `${g.id} (${g.name})`);
  fillSelect($("region"), regions.regions, (r) => `${r.id}: ${r.name} (${r.ci_g_per_kwh} g/kWh)`);
  $("model").value = "llama-3.1-8b";
  $("gpu").value = "h100-sxm";
  $("region").value = "WORLD";
}

// The name a pasted config.json goes by (the API echoes the request's `model`): its _name_or_path, else its
// architecture and model_type.
function configName(config) {
  if (config && typeof config === "object" && !Array.isArray(config)) {
    if (typeof config._name_or_path === "string" && config._name_or_path.trim() !== "")
      return config._name_or_path.trim();
    const arch = Array.isArray(config.architectures) && typeof config.architectures[0] === "string"
                     ? config.architectures[0] : "";
    const type = typeof config.model_type === "string" ? config.model_type : "";
    if (arch && type) return `${arch} (${type})`;
    if (arch || type) return arch || type;
  }
  return "pasted config.json";
}

// The request the form describes, keys as the API's (the CLI's flags); empty fields keep the defaults.
function currentRequest() {
  const request = {};
  for (const field of FIELDS) {
    const value = $(field).value.trim();
    if (value === "") continue;
    if (INTEGER_FIELDS.has(field)) request[field] = Number(value);
    else if (field === "ci") request[field] = Number(value);
    else request[field] = value;
  }
  const config = $("model_config").value.trim();
  $("model").disabled = config !== "";  // the pasted config is what runs
  if (config !== "") {
    try {
      request.model_config = JSON.parse(config);
    } catch (e) {
      throw new Error(`config.json: ${e.message}`);
    }
    request.model = configName(request.model_config);
  }
  return request;
}

function saveToUrl() {
  const params = new URLSearchParams();
  for (const field of FIELDS) if ($(field).value.trim() !== "") params.set(field, $(field).value.trim());
  history.replaceState(null, "", `${location.pathname}?${params}`);
}

function restoreFromUrl() {
  const params = new URLSearchParams(location.search);
  for (const field of FIELDS) if (params.has(field)) $(field).value = params.get(field);
}

// Shows an error in the page's words (or hides the box with an empty message); marks the fields it names.
function showError(element, message) {
  const {text, fields} = message ? inFormWords(message) : {text: "", fields: new Set()};
  element.textContent = text;
  element.hidden = !text;
  return fields;
}

function markInvalid(fields) {
  for (const id of [...FIELDS, "model_config"]) {
    if (fields.has(id)) $(id).setAttribute("aria-invalid", "true");
    else $(id).removeAttribute("aria-invalid");
  }
}

function clearPrediction() {
  for (const id of FIGURES) $(id).textContent = "–";
  for (const id of INTERVALS) $(id).textContent = "";
  $("energy-scope").textContent = "";
  $("evidence").textContent = "";
  $("evidence-basis").textContent = "";
  $("shown-model").textContent = "";
  $("shown-setup").textContent = "";
  $("subject").hidden = true;
  $("notes").textContent = "";
}

function showPrediction(p, request) {
  const iv = p.intervals || {};
  $("shown-model").textContent = p.model;
  $("shown-setup").textContent = `${request.model_config ? "(the pasted config.json) " : ""}on ${p.gpus}` +
      `${p.pipeline_parallel > 1 ? ` × ${p.pipeline_parallel} stages` : ""} × ` +
      `${p.gpu}, ${p.dtype}, ${p.engine}; batch ${p.batch}, ${p.prompt_tokens} prompt and ${p.gen_tokens} ` +
      `generated tokens per sequence`;
  $("subject").hidden = false;
  $("energy-scope").textContent = p.energy_scope_label || p.energy_scope || "";
  $("energy-j").textContent = shown(p.energy_j.total);
  $("energy-wh").textContent = shown(p.energy_wh.total);
  $("energy-interval").textContent = intervalText(iv.energy_j, "J");
  $("energy-per-1k-j").textContent = shown(p.energy_per_1k_output_tokens_j);
  $("energy-per-1k-wh").textContent = shown(p.energy_per_1k_output_tokens_wh);
  $("latency-s").textContent = shown(p.latency_s.total);
  $("latency-interval").textContent = intervalText(iv.latency_s, "s");
  $("ttft-ms").textContent = shown(p.ttft_s === null ? null : p.ttft_s * 1000);
  $("tpot-ms").textContent = shown(p.tpot_s === null || p.tpot_s === undefined ? null : p.tpot_s * 1000);
  $("tokens-per-s").textContent = shown(p.output_tokens_per_s);
  $("co2-operational").textContent = shown(p.co2_g.operational.total);
  $("co2-embodied").textContent = p.co2_g.embodied ? shown(p.co2_g.embodied.total) : "–";
  $("co2-total").textContent = shown(p.co2_g.total.total);
  const co2 = iv.co2_g || {};
  $("co2-operational-interval").textContent = intervalText(co2.operational, "g");
  $("co2-embodied-interval").textContent = intervalText(co2.embodied, "g");
  $("co2-total-interval").textContent = intervalText(co2.total, "g");
  // How sure the figures are: the request's evidence label against the measured setups, and its intervals' basis.
  const evidence = p.evidence || {};
  $("evidence").textContent = evidence.label ? `${evidence.label}: ${evidence.reason}` : (evidence.reason || "");
  $("evidence-basis").textContent = p.interval_note || "";
  $("notes").textContent = [p.region && `region ${p.region}, ${p.ci_g_per_kwh} g/kWh, PUE ${p.pue}`,
                            ...(p.warnings || [])].filter(Boolean).join("; ");
}

function svgElement(name, attributes, text) {
  const element = document.createElementNS("http://www.w3.org/2000/svg", name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
  if (text !== undefined) element.textContent = text;
  return element;
}

// Axis ticks from 0 past `max` at a round step (1, 2 or 5 x 10^k), about `count` of them; labels with the digits
// the step needs.
function niceTicks(max, count) {
  if (!(max > 0)) return {values: [0, 1], digits: 0};
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const f = raw / power;
  const step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * power;
  const n = Math.max(1, Math.ceil(max / step - 1e-9));
  const digits = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  return {values: Array.from({length: n + 1}, (_, i) => i * step), digits};
}

function clearComparison() {
  drawn = null;
  $("chart").replaceChildren();
  $("chart").closest("figure").hidden = true;
  $("chart-scope").textContent = "";
  $("compare-notes").textContent = "";
}

// One horizontal bar per setup that runs (the model fits), its length the total CO2 of the request, its value at
// its end; the chosen setup outlined, the lowest-carbon one green. Drawn at the width the page gives it.
function drawChart(comparison, request) {
  drawn = {comparison, request};
  const svg = $("chart");
  const figure = svg.closest("figure");
  figure.hidden = false;
  const setups = comparison.setups.filter((s) => !s.unavailable);
  const width = Math.max(240, Math.floor(figure.clientWidth));
  const rowH = 22, top = 28, axisH = 46;
  const labelW = Math.min(130, Math.round(width * 0.34)), valueW = 74;
  const x0 = labelW + 8, x1 = width - valueW;
  const plotBottom = top + setups.length * rowH;
  const height = plotBottom + axisH;
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  const maxG = Math.max(0, ...setups.map((s) => s.co2_g.total.total));
  const ticks = niceTicks(maxG, Math.max(2, Math.min(6, Math.floor((x1 - x0) / 60))));
  const domain = ticks.values[ticks.values.length - 1];
  const xOf = (g) => x0 + (g / domain) * (x1 - x0);
  const items = [svgElement("text", {x: 0, y: 12, class: "axis-label y"}, "GPU type × count")];
  for (const value of ticks.values) {
    const x = xOf(value);
    items.push(svgElement("line", {x1: x, y1: top - 4, x2: x, y2: plotBottom + 4, class: "grid"}),
               svgElement("text", {x, y: plotBottom + 16, "text-anchor": "middle", class: "tick"},
                          `${value === 0 ? "0" : value.toFixed(ticks.digits)} g`));
  }
  items.push(svgElement("line", {x1: x0, y1: plotBottom, x2: x1, y2: plotBottom, class: "axis"}),
             svgElement("line", {x1: x0, y1: top - 4, x2: x0, y2: plotBottom, class: "axis"}),
             svgElement("text", {x: (x0 + x1) / 2, y: plotBottom + 38, "text-anchor": "middle", class: "axis-label x"},
                        "total CO₂ per request (g)"));
  // A setup in words: its GPU type and count, and its pipeline stages when it has them.
  const setupWords = (s) => `${s.gpu} × ${s.gpus}${s.pipeline_parallel > 1 ? ` × ${s.pipeline_parallel} stages` : ""}`;
  setups.forEach((s, i) => {
    const y = top + i * rowH, mid = y + rowH / 2;
    const current = s.gpu === request.gpu && s.gpus === (request.gpus || 1);
    const w = Math.max(xOf(s.co2_g.total.total) - x0, 0.5);
    const bar = svgElement("rect", {x: x0, y: y + 3, width: w, height: rowH - 6, "data-gpu": s.gpu,
                                    "data-gpus": s.gpus, "data-co2-g": s.co2_g.total.total,
                                    class: `bar${s.best ? " best" : ""}${current ? " current" : ""}`});
    bar.appendChild(svgElement("title", {}, `${setupWords(s)} (${s.dtype}, ${s.energy_scope} ${s.node}): ` +
        `${shown(s.co2_g.total.total)} g CO₂ (operational ${shown(s.co2_g.operational.total)} g, embodied ` +
        `${s.co2_g.embodied ? shown(s.co2_g.embodied.total) : "unknown"} g), ${shown(s.energy_j.total)} J, ` +
        `${shown(s.latency_s.total)} s` +
        `${s.meets_slo === false ? ", misses the latency objective" : ""}` +
        `${(s.notes || []).length ? `; ${s.notes.join("; ")}` : ""}`));
    items.push(svgElement("text", {x: x0 - 6, y: mid + 4, "text-anchor": "end", class: "setup"}, setupWords(s)),
               bar,
               svgElement("text", {x: x0 + w + 4, y: mid + 4, class: "bar-value"}, `${shown(s.co2_g.total.total)} g`));
  });
  svg.replaceChildren(...items);
  $("chart-scope").textContent = comparison.energy_scope === "gpu"
      ? "Energy scope: the GPU boards only (gpu)."
      : `Energy scope: ${comparison.energy_scope || "node"}, each setup's own server node at the wall, ` +
        "its GPUs' share.";
  // The setups not drawn, by reason: the model does not fit their memory, or another refusal in the page's words.
  const skipped = new Map();
  for (const s of comparison.setups.filter((s) => s.unavailable)) {
    const why = / does not fit /.test(s.unavailable) ? "the model does not fit" : inFormWords(s.unavailable).text;
    skipped.set(why, [...(skipped.get(why) || []), `${s.gpu} × ${s.gpus}`]);
  }
  const notes = [...new Set(setups.flatMap((s) => (s.notes || []).map((n) => `${s.gpu}: ${n}`)))];
  $("compare-notes").textContent = [...[...skipped].map(([why, which]) => `Not drawn, ${why}: ${which.join(", ")}.`),
                                    ...notes].join(" ");
}

async function update() {
  const mine = ++generation;
  saveToUrl();
  let request;
  try {
    request = currentRequest();
  } catch (e) {
    clearPrediction();
    clearComparison();
    showError($("compare-error"), "");
    showError($("error"), e.message);
    markInvalid(new Set(["model_config"]));
    $("status").textContent = "(error)";
    document.body.dataset.generation = String(mine);
    return;
  }
  $("status").textContent = "updating…";
  const gpuTypes = [...new Set([request.gpu, ...COMPARED_GPUS].filter(Boolean))];
  const chosen = Number.isInteger(request.gpus) && request.gpus >= 1 && request.gpus <= 64 ? [request.gpus] : [];
  const counts = [...new Set([...COMPARED_COUNTS, ...chosen])].sort((a, b) => a - b);  // the chosen setup too
  $("chart").dataset.gpuTypes = gpuTypes.join(",");
  $("chart").dataset.counts = counts.join(",");
  const compareBody = {request, gpu_types: gpuTypes, counts};
  const [prediction, comparison] = await Promise.allSettled([getJson("/v1/predict", request),
                                                             getJson("/v1/compare", compareBody)]);
  if (mine !== generation) return;  // newer inputs are on their way
  // No figure outlives the inputs it was computed for: an error clears what the previous inputs gave, and a request
  // refused gets no comparison either (its error is said once, above).
  const invalid = showError($("error"), prediction.status === "rejected" ? prediction.reason.message : "");
  if (prediction.status === "fulfilled") showPrediction(prediction.value, request);
  else clearPrediction();
  const compared = prediction.status === "fulfilled" && comparison.status === "fulfilled";
  showError($("compare-error"), prediction.status === "fulfilled" && comparison.status === "rejected"
                                    ? comparison.reason.message : "");
  if (compared) drawChart(comparison.value, request);
  else clearComparison();
  markInvalid(invalid);
  $("status").textContent = prediction.status === "fulfilled" ? "" : "(error)";
  document.body.dataset.generation = String(mine);  // lets tests wait for an answer
}

function debounce(fn, ms) {
  let timer;
  return () => { clearTimeout(timer); timer = setTimeout(fn, ms); };
}

async function main() {
  clearPrediction();
  clearComparison();
  try {
    await loadCatalogs();
  } catch (e) {
    return showError($("error"), `catalogs: ${e.message}`);
  }
  restoreFromUrl();
  const later = debounce(update, DEBOUNCE_MS);
  $("inputs").addEventListener("input", later);
  $("inputs").addEventListener("change", later);
  $("inputs").addEventListener("submit", (e) => e.preventDefault());
  window.addEventListener("resize", debounce(() => { if (drawn) drawChart(drawn.comparison, drawn.request); }, 100));
  await update();
}

main();
