// The shortener page. Everything the server returns is inserted with textContent or as an
// href of a URL the server validated (http/https only) — never as HTML — and the page's CSP
// allows no inline script, so a hostile stored URL cannot run (seed 003 ch. 8 service, issue 7).
"use strict";

function $(id) { return document.getElementById(id); }

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = false;
}

async function postJson(url, body) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const data = await response.json();
  return { status: response.status, data: data };
}

async function shorten(event) {
  event.preventDefault();
  $("error").hidden = true;
  const body = { longUrl: $("long-url").value };
  if ($("alias").value) body.alias = $("alias").value;
  if ($("redirect").value) body.redirect = Number($("redirect").value);
  const { status, data } = await postJson("/api/v1/data/shorten", body);
  if (status !== 200 && status !== 201) {
    showError(data.error || ("error " + status));
    return;
  }
  const link = $("short-url");
  link.textContent = data.shortUrl;
  link.href = data.shortUrl;
  $("result-long").textContent = data.longUrl;
  $("copied").hidden = true;
  $("result").hidden = false;
  $("stats-code").value = data.code;
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
    key.textContent = row.key;
    const clicks = document.createElement("td");
    clicks.textContent = String(row.clicks);
    tr.append(key, clicks);
    body.append(tr);
  }
}

async function showStats(event) {
  event.preventDefault();
  $("error").hidden = true;
  let code = $("stats-code").value.trim();
  code = code.substring(code.lastIndexOf("/") + 1);
  const response = await fetch("/api/v1/" + encodeURIComponent(code) + "/stats");
  const data = await response.json();
  if (response.status !== 200) {
    showError(data.error || ("error " + response.status));
    return;
  }
  $("stats-clicks").textContent = String(data.clicks);
  $("stats-for").textContent = data.code;
  $("stats-long").textContent = data.longUrl;
  $("stats-note").hidden = data.countsEveryClick;
  fillTable("stats-days", data.byDay);
  fillTable("stats-referrers", data.referrers);
  fillTable("stats-agents", data.userAgents);
  $("stats").hidden = false;
}

document.addEventListener("DOMContentLoaded", function () {
  $("shorten-form").addEventListener("submit", shorten);
  $("stats-form").addEventListener("submit", showStats);
  $("copy").addEventListener("click", copyShortUrl);
});
