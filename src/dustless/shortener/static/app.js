// The shortener page. Everything the server returns is inserted with textContent or as an
// href of a URL the server validated (http/https only) — never as HTML — and the page's CSP
// allows no inline script, so a hostile stored URL cannot run (seed 003 ch. 8 service).
"use strict";

const KEY_ITEM = "dustless-shortener-key";
const state = { info: null, page: 1, pages: 1 };

function $(id) { return document.getElementById(id); }

function apiKey() { return window.localStorage.getItem(KEY_ITEM) || ""; }

function authHeaders() {
  const key = apiKey();
  return key ? { authorization: "Bearer " + key } : {};
}

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = false;
}

function showKeyPrompt(why) {
  if (why) $("key-why").textContent = why;
  $("key-box").hidden = false;
  $("key-status").hidden = true;
  $("api-key").focus();
}

async function request(method, url, body) {
  const headers = authHeaders();
  const init = { method: method, headers: headers };
  if (body !== undefined) {
    headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(url, init);
  let data = {};
  try { data = await response.json(); } catch (err) { data = {}; }
  if (response.status === 401) {
    showKeyPrompt(apiKey() ? "The server does not accept this API key (unknown or revoked). Enter another one."
                           : "This service needs an API key for that. Enter yours.");
  }
  return { status: response.status, data: data };
}

async function shorten(event) {
  event.preventDefault();
  $("error").hidden = true;
  // A failed create must not leave the previous link on screen as if it were the answer.
  $("result").hidden = true;
  const body = { longUrl: $("long-url").value };
  if ($("alias").value) body.customSlug = $("alias").value;
  if ($("redirect").value) body.redirect = Number($("redirect").value);
  if ($("valid-until").value) body.validUntil = new Date($("valid-until").value).toISOString();
  if ($("max-visits").value) body.maxVisits = Number($("max-visits").value);
  const { status, data } = await request("POST", "/api/v1/data/shorten", body);
  if (status !== 200 && status !== 201) {
    showError(data.error || ("error " + status));
    return;
  }
  const link = $("short-url");
  link.textContent = data.shortUrl;
  link.href = data.shortUrl;
  $("result-long").textContent = data.longUrl;
  $("copied").hidden = true;
  const qr = "/" + encodeURIComponent(data.code) + "/qr";
  $("qr").src = qr;
  $("qr-png").href = qr + "?format=png&scale=8";
  $("qr-png").setAttribute("download", data.code + ".png");
  $("result").hidden = false;
  $("stats-code").value = data.code;
  if (apiKey()) loadLinks();
}

async function copyShortUrl() {
  const text = $("short-url").textContent;
  try {
    await navigator.clipboard.writeText(text);
  } catch (err) {
    // No clipboard permission (older browsers, http pages): select the text for Ctrl+C.
    const range = document.createRange();
    range.selectNodeContents($("short-url"));
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }
  $("copied").hidden = false;
}

function fillTable(id, rows) {
  const body = $(id);
  body.replaceChildren();
  for (const row of rows) {
    const tr = document.createElement("tr");
    const key = document.createElement("td");
    key.textContent = row.key + (row.potentialBot ? " (bot)" : "");
    const clicks = document.createElement("td");
    clicks.textContent = String(row.clicks);
    tr.append(key, clicks);
    body.append(tr);
  }
}

const SVG = "http://www.w3.org/2000/svg";

// A small bar chart of a link's daily clicks: people dark, bots light, 30 days wide.
function chart(daily, since) {
  const days = 30;
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("width", "120");
  svg.setAttribute("height", "24");
  svg.setAttribute("viewBox", "0 0 120 24");
  svg.setAttribute("class", "chart");
  const start = Date.parse(since + "T00:00:00Z");
  let top = 1;
  for (const d of daily) top = Math.max(top, d.humanClicks + d.potentialBotClicks);
  let total = 0;
  for (const d of daily) {
    const index = Math.round((Date.parse(d.day + "T00:00:00Z") - start) / 86400000);
    if (index < 0 || index >= days) continue;
    const human = d.humanClicks * 24 / top;
    const bots = d.potentialBotClicks * 24 / top;
    total += d.humanClicks + d.potentialBotClicks;
    for (const [height, y, cls] of [[human, 24 - human, "people"], [bots, 24 - human - bots, "bots"]]) {
      if (height <= 0) continue;
      const bar = document.createElementNS(SVG, "rect");
      bar.setAttribute("x", String(index * 4));
      bar.setAttribute("y", String(y));
      bar.setAttribute("width", "3");
      bar.setAttribute("height", String(height));
      bar.setAttribute("class", cls);
      svg.append(bar);
    }
  }
  const title = document.createElementNS(SVG, "title");
  title.textContent = total + " clicks in the last 30 days";
  svg.prepend(title);
  return svg;
}

function cell(text) {
  const td = document.createElement("td");
  td.textContent = text;
  return td;
}

async function loadLinks() {
  const search = $("search").value.trim();
  const url = "/api/v1/links?page=" + state.page + "&search=" + encodeURIComponent(search);
  const { status, data } = await request("GET", url);
  if (status !== 200) {
    $("links").hidden = true;
    if (status !== 401) showError(data.error || ("error " + status));
    return;
  }
  const body = $("links-body");
  body.replaceChildren();
  for (const link of data.links) {
    const tr = document.createElement("tr");
    const shortCell = document.createElement("td");
    const a = document.createElement("a");
    a.textContent = link.shortUrl;
    a.href = link.shortUrl;
    a.rel = "noopener noreferrer";
    shortCell.append(a);
    const longCell = cell(link.longUrl);
    longCell.className = "long";
    const chartCell = document.createElement("td");
    chartCell.append(chart(link.daily, data.chartSince));
    tr.append(shortCell, longCell, cell(String(link.humanClicks)),
              cell(String(link.potentialBotClicks)), chartCell, cell(link.status));
    body.append(tr);
  }
  state.pages = data.pages;
  $("links-total").textContent = data.total + (data.total === 1 ? " link" : " links") +
    (data.search ? " matching “" + data.search + "”" : "");
  $("page-info").textContent = "page " + data.page + " of " + data.pages;
  $("prev-page").disabled = data.page <= 1;
  $("next-page").disabled = data.page >= data.pages;
  $("links").hidden = false;
}

async function showStats(event) {
  event.preventDefault();
  $("error").hidden = true;
  $("stats").hidden = true;
  let code = $("stats-code").value.trim();
  code = code.substring(code.lastIndexOf("/") + 1);
  const { status, data } = await request("GET", "/api/v1/" + encodeURIComponent(code) + "/stats");
  if (status !== 200) {
    showError(data.error || ("error " + status));
    return;
  }
  $("stats-clicks").textContent = String(data.clicks);
  $("stats-human").textContent = String(data.humanClicks);
  $("stats-bots").textContent = String(data.potentialBotClicks);
  $("stats-status").textContent = data.status;
  $("stats-for").textContent = data.code;
  $("stats-long").textContent = data.longUrl;
  $("stats-note").hidden = data.countsEveryClick;
  fillTable("stats-days", data.byDay);
  fillTable("stats-referrers", data.referrers);
  fillTable("stats-agents", data.userAgents);
  $("stats").hidden = false;
}

function saveKey(event) {
  event.preventDefault();
  const key = $("api-key").value.trim();
  if (!key) return;
  window.localStorage.setItem(KEY_ITEM, key);
  $("api-key").value = "";
  $("key-box").hidden = true;
  $("key-status").hidden = false;
  $("error").hidden = true;
  state.page = 1;
  loadLinks();
}

function forgetKey() {
  window.localStorage.removeItem(KEY_ITEM);
  $("key-status").hidden = true;
  $("links").hidden = true;
  if (state.info && state.info.keysRequired) showKeyPrompt();
}

async function start() {
  const response = await fetch("/api/v1/info");
  state.info = await response.json();
  if (apiKey()) {
    $("key-status").hidden = false;
    loadLinks();
  } else if (state.info.keysRequired) {
    showKeyPrompt();
  }
}

document.addEventListener("DOMContentLoaded", function () {
  $("shorten-form").addEventListener("submit", shorten);
  $("stats-form").addEventListener("submit", showStats);
  $("key-form").addEventListener("submit", saveKey);
  $("search-form").addEventListener("submit", function (event) {
    event.preventDefault();
    state.page = 1;
    loadLinks();
  });
  $("prev-page").addEventListener("click", function () { state.page -= 1; loadLinks(); });
  $("next-page").addEventListener("click", function () { state.page += 1; loadLinks(); });
  $("forget-key").addEventListener("click", forgetKey);
  $("copy").addEventListener("click", copyShortUrl);
  start();
});
