// server/web/app.js - the web calculator: fills the form from the catalogs, keeps the inputs in the URL, asks
// /v1/predict and /v1/compare as the inputs change (debounced) and draws the comparison as inline SVG.
"use strict";

const FIELDS = ["model", "gpu", "gpus", "engine", "dtype", "batch", "prompt", "gen", "region", "ci", "pue"];
const INTEGER_FIELDS = new Set(["gpus", "batch", "prompt", "gen"]);
const COMPARED_GPUS = ["h100-sxm", "h200", "a100-80gb-sxm", "l40s"];  // plus the chosen GPU
const COMPARED_COUNTS = [1, 2, 4, 8];
const DEBOUNCE_MS = 300;
let generation = 0;  // answers to older inputs are dropped

const $ = (id) => document.getElementById(id);

// Four significant digits, whole numbers from 1,000 up (never exponent notation for the usual ranges).
function shown(x) {
  if (x === null || x === undefined || !Number.isFinite(x)) return "–";
  return Math.abs(x) >= 1000 ? x.toFixed(0) : x.toPrecision(4);
}

function intervalText(iv) {
  if (!iv || iv.total === null || iv.total === undefined) return "";
  const t = iv.total;
  return Array.isArray(t) ? `80%: ${shown(t[0])} – ${shown(t[1])}` : `80%: ${shown(t.low)} – ${shown(t.high)}`;
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
  if (config !== "") {
    try {
      request.model_config = JSON.parse(config);
    } catch (e) {
      throw new Error(`config.json: ${e.message}`);
    }
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

function showError(element, message) {
  element.textContent = message || "";
  element.hidden = !message;
}

function showPrediction(p) {
  const iv = p.intervals || {};
  $("energy-j").textContent = shown(p.energy_j.total);
  $("energy-wh").textContent = shown(p.energy_wh.total);
  $("energy-interval").textContent = intervalText(iv.energy_j);
  $("latency-s").textContent = shown(p.latency_s.total);
  $("latency-interval").textContent = intervalText(iv.latency_s);
  $("ttft-ms").textContent = shown(p.ttft_s === null ? null : p.ttft_s * 1000);
  $("co2-operational").textContent = shown(p.co2_g.operational.total);
  $("co2-embodied").textContent = p.co2_g.embodied ? shown(p.co2_g.embodied.total) : "–";
  $("co2-total").textContent = shown(p.co2_g.total.total);
  const co2 = iv.co2_g || {};
  $("co2-operational-interval").textContent = intervalText(co2.operational);
  $("co2-embodied-interval").textContent = intervalText(co2.embodied);
  $("co2-total-interval").textContent = intervalText(co2.total);
  $("notes").textContent = [p.region && `region ${p.region}, ${p.ci_g_per_kwh} g/kWh, PUE ${p.pue}`,
                            ...(p.warnings || [])].filter(Boolean).join("; ");
}

function svgElement(name, attributes, text) {
  const element = document.createElementNS("http://www.w3.org/2000/svg", name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
  if (text !== undefined) element.textContent = text;
  return element;
}

// One bar per setup that runs (the model fits), its height the total CO2; the chosen setup outlined, the best green.
function drawChart(comparison, request) {
  const svg = $("chart");
  const setups = comparison.setups.filter((s) => !s.unavailable);
  const left = 50, top = 20, bottom = 120, width = Math.max(360, left + setups.length * 34 + 20), height = 330;
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  const maxG = Math.max(...setups.map((s) => s.co2_g.total), 1e-12);
  const plotH = height - top - bottom;
  const items = [svgElement("line", {x1: left, y1: top + plotH, x2: width, y2: top + plotH, stroke: "#888"}),
                 svgElement("text", {x: 4, y: top}, shown(maxG)), svgElement("text", {x: 4, y: top + plotH}, "0")];
  setups.forEach((s, i) => {
    const h = (s.co2_g.total / maxG) * plotH, x = left + i * 34, y = top + plotH - h;
    const current = s.gpu === request.gpu && s.gpus === (request.gpus || 1);
    const bar = svgElement("rect", {x, y, width: 26, height: Math.max(h, 0.5), "data-gpu": s.gpu,
                                    "data-gpus": s.gpus, "data-co2-g": s.co2_g.total,
                                    class: `bar${s.best ? " best" : ""}${current ? " current" : ""}`});
    bar.appendChild(svgElement("title", {}, `${s.gpu} x${s.gpus}: ${shown(s.co2_g.total)} g, ` +
                                            `${shown(s.latency_s)} s${s.meets_slo === false ? " (misses SLO)" : ""}`));
    items.push(bar, svgElement("text", {x: x + 13, y: top + plotH + 8, transform:
                                        `rotate(60 ${x + 13} ${top + plotH + 8})`}, `${s.gpu} x${s.gpus}`));
  });
  svg.replaceChildren(...items);
  const skipped = comparison.setups.length - setups.length;
  $("compare-notes").textContent = skipped ? `${skipped} setups do not fit the model and are not drawn.` : "";
}

async function update() {
  const mine = ++generation;
  saveToUrl();
  let request;
  try {
    request = currentRequest();
  } catch (e) {
    return showError($("error"), e.message);
  }
  $("status").textContent = "updating…";
  const gpuTypes = [...new Set([request.gpu, ...COMPARED_GPUS].filter(Boolean))];
  $("chart").dataset.gpuTypes = gpuTypes.join(",");
  $("chart").dataset.counts = COMPARED_COUNTS.join(",");
  const compareBody = {request, gpu_types: gpuTypes, counts: COMPARED_COUNTS};
  const [prediction, comparison] = await Promise.allSettled([getJson("/v1/predict", request),
                                                             getJson("/v1/compare", compareBody)]);
  if (mine !== generation) return;  // newer inputs are on their way
  showError($("error"), prediction.status === "rejected" ? prediction.reason.message : "");
  if (prediction.status === "fulfilled") showPrediction(prediction.value);
  showError($("compare-error"), comparison.status === "rejected" ? comparison.reason.message : "");
  if (comparison.status === "fulfilled") drawChart(comparison.value, request);
  $("status").textContent = prediction.status === "fulfilled" ? "" : "(error)";
  document.body.dataset.generation = String(mine);  // lets tests wait for an answer
}

function debounce(fn, ms) {
  let timer;
  return () => { clearTimeout(timer); timer = setTimeout(fn, ms); };
}

async function main() {
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
  await update();
}

main();
