// The catalog: toolsets and their tools, a filter, the selected tool's
// schema as a form, and Try it with the input rounds answered in place.
import { getBlob, postJson } from './api.js';
import { h, replace } from './dom.js';
import { schemaFields } from './form.js';

const list = document.getElementById('tool-list');
const detail = document.getElementById('tool-detail');
const filter = document.getElementById('tool-filter');
let tools = [];
let toolsets = [];
let dialogs = [];
let selected = null;
let blobUrls = [];

filter.addEventListener('input', renderList);

export function setCatalog(t, ts) {
  tools = t;
  toolsets = ts;
  renderList();
  if (selected && !tools.some((x) => x.name === selected)) {
    selected = null;
    replace(detail, h('p', { class: 'muted' }, 'The tool left the catalog.'));
  }
}

export function setDialogs(names) {
  dialogs = names;
  const dl = document.getElementById('dialog-names');
  if (dl) replace(dl, dialogs.map((d) => h('option', { value: d })));
}

function matches(t, q) {
  return !q || [t.name, t.server, t.originalName, t.description, t.title].some((s) => typeof s === 'string' && s.toLowerCase().includes(q));
}

function renderList() {
  const q = filter.value.trim().toLowerCase();
  const byName = new Map(tools.map((t) => [t.name, t]));
  const groups = toolsets.length ? toolsets.map((s) => ({ name: s.name, tools: s.tools.map((n) => byName.get(n)).filter(Boolean) })) : [{ name: 'tools', tools }];
  const out = [];
  let shown = 0;
  for (const g of groups) {
    const ts = g.tools.filter((t) => matches(t, q));
    if (!ts.length) continue;
    shown += ts.length;
    out.push(h('h3', { class: 'toolset' }, g.name));
    for (const t of ts) {
      out.push(h('button', { type: 'button', class: 'tool-btn', 'data-key': `tool:${t.name}`, 'aria-pressed': String(t.name === selected), onclick: () => select(t.name) },
        t.name, h('small', {}, t.server && t.server !== g.name ? `${t.server} · ${t.originalName}` : t.originalName)));
    }
  }
  if (!shown) out.push(h('p', { class: 'muted' }, q ? 'No tool matches.' : 'No tools.'));
  const focused = document.activeElement && document.activeElement.dataset && document.activeElement.dataset.key;
  replace(list, out);
  if (focused) list.querySelector(`[data-key="${CSS.escape(focused)}"]`)?.focus();
}

function select(name) {
  selected = name;
  renderList();
  const t = tools.find((x) => x.name === name);
  if (t) renderTool(t);
}

function annotations(a) {
  if (!a) return null;
  return h('div', { class: 'chips', 'aria-label': 'annotations' }, Object.entries(a).map(([k, v]) => h('span', { class: 'chip' }, `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)));
}

function renderTool(t) {
  const fields = schemaFields(t.inputSchema);
  const dialogInput = h('input', { id: 'try-dialog', list: 'dialog-names', value: 'ui', autocomplete: 'off' });
  const result = h('div', { class: 'result', 'aria-live': 'polite' });
  const form = h('form', { class: 'schema', 'aria-label': `Arguments of ${t.name}` },
    fields.els,
    h('div', { class: 'field' }, h('label', { for: 'try-dialog' }, 'Dialog'), dialogInput, h('datalist', { id: 'dialog-names' }, dialogs.map((d) => h('option', { value: d }))),
      h('span', { class: 'hint' }, 'root or root/self; leased servers hold an instance for it until Release')),
    h('div', { class: 'row' }, h('button', { type: 'submit', class: 'primary' }, 'Try it')));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    let args;
    try { args = fields.read(); } catch (err) { replace(result, h('p', { class: 'error', role: 'alert' }, err.message)); return; }
    const body = { arguments: args };
    if (dialogInput.value.trim()) body.dialog = dialogInput.value.trim();
    call(t.name, body, result);
  });
  replace(detail,
    h('h3', {}, t.title ? `${t.name} — ${t.title}` : t.name),
    h('p', { class: 'muted' }, `server ${t.server || 'the gateway'} · original name ${t.originalName} · toolset ${t.toolset}`),
    h('p', { class: 'desc' }, t.description || ''),
    annotations(t.annotations),
    form,
    h('details', {}, h('summary', {}, 'Input schema (JSON)'), h('pre', { tabindex: 0 }, JSON.stringify(t.inputSchema, null, 2))),
    result);
}

async function call(name, body, out) {
  for (const u of blobUrls) URL.revokeObjectURL(u);
  blobUrls = [];
  replace(out, h('p', { class: 'muted' }, 'Calling…'));
  let res;
  try { res = await postJson(`/v1/tools/${encodeURIComponent(name)}/call`, body); } catch (err) { replace(out, h('p', { class: 'error', role: 'alert' }, err.message)); return; }
  if (res.status === 409 && res.body && res.body.inputRequests) { renderRound(name, body, res.body, out); return; }
  if (res.status !== 200) {
    const e = (res.body && res.body.error) || {};
    replace(out, h('p', { class: 'error', role: 'alert' }, `HTTP ${res.status} ${e.code || ''}: ${e.message || ''}`));
    return;
  }
  renderResult(res.body, body, out);
}

function artifactPath(a) {
  return `/api/dialogs/${encodeURIComponent(a.rootId)}/${encodeURIComponent(a.selfId)}/artifact?path=${encodeURIComponent(a.relPath)}`;
}

async function media(tag, a, alt) {
  const el = h(tag, tag === 'img' ? { alt } : { controls: true, 'aria-label': alt });
  try {
    const url = URL.createObjectURL(await getBlob(a.url || artifactPath(a)));
    blobUrls.push(url);
    el.src = url;
  } catch (err) {
    return h('p', { class: 'error' }, `${alt}: ${err.message}`);
  }
  return el;
}

function renderResult(r, body, out) {
  const items = r.contentItems || [];
  const place = items.find((i) => i.artifact)?.artifact;
  const dialog = (body.dialog || 'anonymous').split('/');
  const where = place || (r.lease ? { rootId: dialog[0], selfId: dialog[1] || dialog[0] } : { rootId: 'anonymous', selfId: 'anonymous' });
  const parts = [h('p', {}, r.isError ? h('span', { class: 'badge s-error' }, 'tool error') : h('span', { class: 'badge s-ok' }, 'ok'),
    r.lease ? ` leased instance ${r.lease.instance} of ${r.lease.serverId}` : '', r.restarted ? ' (restarted)' : '')];
  for (const it of items) {
    if (it.type === 'input_image' && it.artifact) {
      parts.push(media('img', it.artifact, `image result (${it.mimeType}, ${it.byteLength} bytes)`));
    } else if (it.type === 'input_text') {
      const audio = /^\[audio content \((audio\/[^,]+), \d+ bytes\) saved as artifact (\S+)\]$/.exec(it.text || '');
      parts.push(h('pre', { tabindex: 0 }, it.text ?? ''));
      if (audio) parts.push(media('audio', it.artifact || { ...where, relPath: audio[2] }, `audio result (${audio[1]})`));
    } else {
      parts.push(h('pre', { tabindex: 0 }, JSON.stringify(it, null, 2)));
    }
  }
  if (r.structuredContent !== undefined) parts.push(h('p', { class: 'muted' }, 'Structured content'), h('pre', { tabindex: 0 }, JSON.stringify(r.structuredContent, null, 2)));
  Promise.all(parts).then((els) => replace(out, els));
}

// A 409 input_required: one small form per request; once each has an
// answer the call is repeated with inputResponses and the requestState.
function renderRound(name, body, r, out) {
  const answers = {};
  const keys = Object.keys(r.inputRequests);
  const box = h('div', { class: 'round', role: 'group', 'aria-label': 'The server asks for input' },
    h('p', {}, h('strong', {}, 'The server asks for input'), ` (${keys.length} request${keys.length > 1 ? 's' : ''})`));
  const answer = (key, value, form) => {
    answers[key] = value;
    form.querySelectorAll('button, input, select, textarea').forEach((el) => { el.disabled = true; });
    if (keys.every((k) => k in answers)) call(name, { ...body, inputResponses: answers, requestState: r.requestState }, out);
  };
  for (const key of keys) {
    const req = r.inputRequests[key] || {};
    const p = req.params || {};
    const form = h('form', { class: 'schema', 'aria-label': `${req.method} ${key}` });
    if (req.method === 'elicitation/create') {
      const fields = schemaFields(p.requestedSchema);
      const err = h('p', { class: 'error', role: 'alert' });
      form.append(h('p', { class: 'desc' }, p.message || ''), ...fields.els, err,
        h('div', { class: 'row' }, h('button', { type: 'submit', class: 'primary' }, 'Accept'),
          h('button', { type: 'button', onclick: () => answer(key, { action: 'decline' }, form) }, 'Decline'),
          h('button', { type: 'button', onclick: () => answer(key, { action: 'cancel' }, form) }, 'Cancel')));
      form.addEventListener('submit', (e) => {
        e.preventDefault();
        try { answer(key, { action: 'accept', content: fields.read() }, form); } catch (x) { err.textContent = x.message; }
      });
    } else if (req.method === 'sampling/createMessage') {
      const id = `sample-${key}`;
      const text = h('textarea', { id, required: true });
      const asked = (p.messages || []).map((m) => `${m.role}: ${m.content && m.content.type === 'text' ? m.content.text : JSON.stringify(m.content)}`).join('\n');
      form.append(p.systemPrompt ? h('p', { class: 'muted' }, `System: ${p.systemPrompt}`) : null, h('pre', { tabindex: 0 }, asked),
        h('label', { for: id }, 'Reply as the model'), text, h('div', { class: 'row' }, h('button', { type: 'submit', class: 'primary' }, 'Send reply')));
      form.addEventListener('submit', (e) => {
        e.preventDefault();
        answer(key, { role: 'assistant', content: { type: 'text', text: text.value }, model: 'mcpgw-operator', stopReason: 'endTurn' }, form);
      });
    } else if (req.method === 'roots/list') {
      const id = `roots-${key}`;
      const text = h('textarea', { id, placeholder: 'file:///path, one per line' });
      form.append(h('label', { for: id }, 'Roots to give the server'), text, h('div', { class: 'row' }, h('button', { type: 'submit', class: 'primary' }, 'Send roots')));
      form.addEventListener('submit', (e) => {
        e.preventDefault();
        answer(key, { roots: text.value.split('\n').map((s) => s.trim()).filter(Boolean).map((uri) => ({ uri })) }, form);
      });
    } else {
      form.append(h('pre', { tabindex: 0 }, JSON.stringify(req, null, 2)), h('p', { class: 'muted' }, 'This request cannot be answered here.'));
    }
    box.append(h('h4', {}, req.method || key), form);
  }
  replace(out, box);
  box.querySelector('input, select, textarea, button')?.focus();
}
