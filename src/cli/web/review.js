// git astedit review: the page. Plain script, no dependencies, no network but this
// server's /api; every text from the preview goes into the page as text nodes.
'use strict';

const GROUP_PAGE = 200;
const SITE_PAGE = 50;
// Groups whose representative diff comes with the first request: more than a screen
// shows. The others' are fetched as their groups come near the view.
const FIRST_DRAWN = 12;

let review = null;
let shownGroups = 0;
let focus = 0;
let sideBySide = false;
let busy = false;
const loaded = new Map(); // group key -> {sites: [], total}

// ---- helpers ------------------------------------------------------------------

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function say(text, error) {
  const s = document.getElementById('status');
  s.textContent = text;
  s.classList.toggle('error', !!error);
}

async function call(method, path, body) {
  const init = { method, credentials: 'same-origin', headers: {} };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const r = await fetch(path, init);
  const text = await r.text();
  let value = null;
  try { value = text ? JSON.parse(text) : null; } catch (_) { value = null; }
  if (!r.ok) {
    const msg = value && value.error ? value.error.message : text.trim();
    throw new Error(msg || ('HTTP ' + r.status));
  }
  return value;
}

// A decision as the model writes it: "accept", "Accept", {"decision": "accept", …}.
function decisionOf(d) {
  if (d === null || d === undefined) return null;
  if (typeof d === 'object') return decisionOf(d.decision !== undefined ? d.decision : d.kind);
  const s = String(d).toLowerCase();
  return s.startsWith('acc') ? 'accept' : s.startsWith('rej') ? 'reject' : null;
}

function decisionClass(d) {
  return d === 'accept' ? 'accepted' : d === 'reject' ? 'rejected' : 'undecided';
}

function plural(n, one, many) {
  return n + ' ' + (n === 1 ? one : (many || one + 's'));
}

// ---- highlighting: keywords, strings, comments, numbers -------------------------

const KEYWORDS = new Set((
  'abstract as async await break case catch class const continue def default defer del ' +
  'delete do elif else enum except export extends false final finally fn for from func ' +
  'function go if impl import in instanceof interface is lambda let loop match mod module ' +
  'mut new nil none None not null or and package pass private protected pub public raise ' +
  'return self Self static struct super switch this throw throws trait true True False try ' +
  'type typeof undefined unsafe use var void where while with yield').split(' '));
const HASH_COMMENTS = new Set(['py', 'rb', 'sh', 'bash', 'zsh', 'yaml', 'yml', 'toml', 'pl',
  'r', 'ex', 'exs', 'nix', 'cmake', 'tf', 'hcl', 'mk']);

function tokenizer(path) {
  const ext = (path.match(/\.([A-Za-z0-9]+)$/) || [, ''])[1].toLowerCase();
  const comment = HASH_COMMENTS.has(ext) ? '#.*' : '\\/\\/.*|\\/\\*.*?(?:\\*\\/|$)';
  return new RegExp('(' + comment + ')|("(?:[^"\\\\]|\\\\.)*"?|\'(?:[^\'\\\\]|\\\\.)*\'?|`(?:[^`\\\\]|\\\\.)*`?)' +
    '|(\\b\\d[\\w.]*)|([A-Za-z_$][\\w$]*)', 'g');
}

function highlight(line, re) {
  const frag = document.createDocumentFragment();
  let at = 0;
  re.lastIndex = 0;
  for (let m; (m = re.exec(line));) {
    const cls = m[1] ? 'com' : m[2] ? 'str' : m[3] ? 'num' : KEYWORDS.has(m[4]) ? 'kw' : null;
    if (!cls) continue;
    if (m.index > at) frag.append(line.slice(at, m.index));
    frag.append(el('span', cls, m[0]));
    at = m.index + m[0].length;
  }
  if (at < line.length) frag.append(line.slice(at));
  return frag;
}

// ---- diffs ----------------------------------------------------------------------

function lines(text) {
  if (text === undefined || text === null || text === '') return [];
  return String(text).replace(/\n$/, '').split('\n');
}

// Lines both sides share at the start and the end are context; the rest changed.
function split(before, after) {
  const a = lines(before), b = lines(after);
  let p = 0;
  while (p < a.length && p < b.length && a[p] === b[p]) p++;
  let s = 0;
  while (s < a.length - p && s < b.length - p && a[a.length - 1 - s] === b[b.length - 1 - s]) s++;
  return { head: a.slice(0, p), del: a.slice(p, a.length - s), add: b.slice(p, b.length - s),
           tail: a.slice(a.length - s) };
}

function cell(tr, cls, sign, text, re) {
  const s = el('td', 'sign ' + cls, sign);
  const t = el('td', cls);
  if (text !== null) t.append(highlight(text, re));
  tr.append(s, t);
}

function diffTable(site) {
  const re = tokenizer(site.path || '');
  const d = split(site.before, site.after);
  const table = el('table', 'diff');
  const row = (cls) => { const tr = el('tr', cls); table.append(tr); return tr; };
  if (!sideBySide) {
    for (const l of d.head) cell(row('ctx'), '', ' ', l, re);
    for (const l of d.del) cell(row('del'), '', '-', l, re);
    for (const l of d.add) cell(row('add'), '', '+', l, re);
    for (const l of d.tail) cell(row('ctx'), '', ' ', l, re);
    return table;
  }
  table.classList.add('side');
  const both = (l) => { const tr = row('ctx'); cell(tr, '', ' ', l, re); cell(tr, '', ' ', l, re); };
  d.head.forEach(both);
  for (let i = 0; i < Math.max(d.del.length, d.add.length); i++) {
    const tr = row('pair');
    cell(tr, i < d.del.length ? 'del' : '', i < d.del.length ? '-' : '', i < d.del.length ? d.del[i] : null, re);
    cell(tr, i < d.add.length ? 'add' : '', i < d.add.length ? '+' : '', i < d.add.length ? d.add[i] : null, re);
  }
  d.tail.forEach(both);
  return table;
}

// ---- groups and sites -------------------------------------------------------------

function groupTitle(g) {
  return g.rule || g.op || g.title || g.label || 'change';
}

function groupEl(g) {
  const sec = el('section', 'group');
  sec.dataset.key = g.key;
  const head = el('div', 'head');
  head.append(el('span', 'badge'), el('span', 'title', groupTitle(g)),
    el('span', 'count', plural(g.count, 'site')));
  if (g.outlier) {
    const tag = el('span', 'tag outlier', 'outlier');
    tag.title = typeof g.outlier === 'string' ? g.outlier : '';
    head.append(tag, el('span', 'why', tag.title));
  }
  const files = g.files || [];
  const names = files.slice(0, 4).join(', ') + (files.length > 4 ? ', and ' + (files.length - 4) + ' more' : '');
  head.append(el('span', 'files', plural(files.length, 'file') + ': ' + names));
  sec.append(head);
  if (g.template) sec.append(el('div', 'template', g.template));
  if (g.representative) {
    sec.append(...representative(g.representative));
  } else if (g.count) {
    const slot = el('div', 'pending', 'The representative diff loads when the group comes into view.');
    sec.append(slot);
    if (nearView) nearView.observe(slot); else fill(slot);
  }
  paintGroup(sec, g);
  return sec;
}

function representative(r) {
  return [el('div', 'where', (r.path || '') + (r.line ? ':' + r.line : '')), diffTable(r)];
}

// A group's representative is its first site: fetched when its slot nears the view.
async function fill(slot) {
  const sec = slot.closest('.group');
  const g = sec && groupOf(sec.dataset.key);
  if (!g) return;
  if (!g.representative) {
    const page = await call('GET', '/api/sites?group=' + encodeURIComponent(g.key) + '&offset=0&limit=1');
    const s = ((page && page.sites) || [])[0];
    if (!s) return;
    g.representative = { path: s.path, line: s.line, before: s.before, after: s.after };
  }
  if (slot.isConnected) slot.replaceWith(...representative(g.representative));
}

const nearView = typeof IntersectionObserver === 'function'
  ? new IntersectionObserver((entries) => {
    for (const e of entries) {
      if (!e.isIntersecting) continue;
      nearView.unobserve(e.target);
      fill(e.target).catch((err) => say(err.message, true));
    }
  }, { rootMargin: '600px 0px' })
  : null;

function paintGroup(sec, g) {
  const d = decisionOf(g.decision);
  const mixed = !d && (g.accepted || g.rejected);
  sec.classList.remove('accepted', 'rejected', 'undecided', 'mixed');
  sec.classList.add(mixed ? 'mixed' : decisionClass(d));
  sec.dataset.decision = d || (mixed ? 'mixed' : 'undecided');
  sec.querySelector('.badge').textContent = d === 'accept' ? 'accepted' : d === 'reject' ? 'rejected'
    : mixed ? (g.accepted || 0) + ' ✓ ' + (g.rejected || 0) + ' ✗' : 'undecided';
}

function siteEl(site) {
  const div = el('div', 'site');
  div.dataset.id = site.id;
  const head = el('div', 'head');
  head.append(el('span', 'badge'), el('span', 'where', (site.path || '') + (site.line ? ':' + site.line : '')));
  div.append(head, diffTable(site));
  paintSite(div, site);
  return div;
}

function paintSite(div, site) {
  const d = decisionOf(site.decision);
  div.classList.remove('accepted', 'rejected', 'undecided');
  div.classList.add(decisionClass(d));
  div.dataset.decision = d || 'undecided';
  div.querySelector('.badge').textContent = d === 'accept' ? 'accepted' : d === 'reject' ? 'rejected' : 'undecided';
  if (site.outlier) div.title = site.outlier;
}

function groupOf(key) {
  return review.groups.find((g) => g.key === key);
}

function renderMoreGroups() {
  const main = document.getElementById('groups');
  const end = Math.min(review.groups.length, shownGroups + GROUP_PAGE);
  for (; shownGroups < end; shownGroups++) main.append(groupEl(review.groups[shownGroups]));
  document.getElementById('more-groups').hidden = shownGroups >= review.groups.length;
}

function summarize() {
  const gs = review.groups;
  const n = (d) => gs.filter((g) => decisionOf(g.decision) === d).length;
  const sites = review.sites !== undefined ? review.sites : gs.reduce((t, g) => t + g.count, 0);
  const outliers = review.outliers !== undefined ? review.outliers : gs.filter((g) => g.outlier).length;
  document.getElementById('preview').textContent = String(review.preview || '').slice(0, 12);
  const counted = review.accepted !== undefined;
  document.getElementById('summary').textContent = plural(sites, 'site') + ' in ' +
    plural(gs.length, 'group') + ' · ' + outliers + ' in outliers · ' +
    (counted ? review.accepted + ' accepted, ' + review.rejected + ' rejected'
      : 'groups accepted ' + n('accept') + ', rejected ' + n('reject'));
  document.getElementById('apply').disabled = busy || !anyDecision();
}

function anyDecision() {
  if (review.accepted !== undefined) return review.accepted > 0;
  return review.groups.some((g) => decisionOf(g.decision) === 'accept');
}

// The items j and k move over: groups, and the sites of expanded groups.
function items() {
  return Array.from(document.querySelectorAll('#groups .group, #groups .group .site'));
}

function setFocus(i) {
  const all = items();
  if (all.length === 0) return;
  focus = Math.max(0, Math.min(i, all.length - 1));
  for (const e of document.querySelectorAll('.focus')) e.classList.remove('focus');
  all[focus].classList.add('focus');
  all[focus].scrollIntoView({ block: 'nearest' });
}

function focused() {
  return items()[focus];
}

function groupElOf(item) {
  return item.classList.contains('group') ? item : item.closest('.group');
}

async function loadSites(sec) {
  const key = sec.dataset.key;
  const g = groupOf(key);
  const have = loaded.get(key) || { sites: [], total: g.count };
  const page = await call('GET', '/api/sites?group=' + encodeURIComponent(key) +
    '&offset=' + have.sites.length + '&limit=' + SITE_PAGE);
  const sites = Array.isArray(page) ? page : page.sites || [];
  have.total = page && page.total !== undefined ? page.total : g.count;
  have.sites = have.sites.concat(sites);
  loaded.set(key, have);
  let box = sec.querySelector('.sites');
  if (!box) { box = el('div', 'sites'); sec.append(box); }
  const more = box.querySelector('.more');
  if (more) more.remove();
  for (const s of sites) box.append(siteEl(s));
  const left = have.total - have.sites.length;
  if (left > 0 && sites.length > 0) {
    const b = el('button', 'more', 'More sites (' + left + ' left)');
    b.type = 'button';
    b.addEventListener('click', () => loadSites(sec).catch((e) => say(e.message, true)));
    box.append(b);
  }
}

async function toggle(sec) {
  const box = sec.querySelector('.sites');
  if (box) {
    box.remove();
    loaded.delete(sec.dataset.key);
    return;
  }
  await loadSites(sec);
}

async function decide(item, decision) {
  const isGroup = item.classList.contains('group');
  const target = isGroup ? { group: item.dataset.key } : { site: item.dataset.id };
  await call('POST', '/api/decide', { decisions: [Object.assign(target, { decision })] });
  const sec = groupElOf(item);
  await refresh(sec);
  const g = groupOf(sec.dataset.key);
  say((decision ? decision + 'ed' : 'undecided') + ': ' +
    (isGroup ? groupTitle(g) + ' (' + plural(g.count, 'site') + ')' : item.querySelector('.where').textContent));
}

// After a decision: the groups' state and the shown sites of `sec` as the server has
// them (a group's decision is its sites').
async function refresh(sec) {
  const fresh = await call('GET', '/api/review?representatives=0');
  const byKey = new Map(fresh.groups.map((g) => [g.key, g]));
  const keep = (g) => {
    const f = byKey.get(g.key);
    if (!f) return g;
    f.representative = g.representative;
    return f;
  };
  review = Object.assign(fresh, { groups: review.groups.map(keep) });
  for (const s of document.querySelectorAll('#groups .group')) paintGroup(s, groupOf(s.dataset.key));
  summarize();
  const key = sec.dataset.key;
  const l = loaded.get(key);
  if (l && l.sites.length) {
    const page = await call('GET', '/api/sites?group=' + encodeURIComponent(key) +
      '&offset=0&limit=' + l.sites.length);
    l.sites = page.sites || [];
    const g = groupOf(key);
    for (const div of sec.querySelectorAll('.site')) {
      const s = l.sites.find((x) => x.id === div.dataset.id);
      if (s) paintSite(div, s);
    }
  }
  summarize();
}

async function apply() {
  busy = true;
  summarize();
  say('Applying…');
  try {
    const report = await call('POST', '/api/apply', {});
    const main = document.getElementById('groups');
    main.replaceChildren();
    const done = el('section');
    done.id = 'done';
    done.append(el('h2', null, 'Applied'),
      el('p', null, 'The accepted sites are in the work tree; the server has stopped and this tab can be closed. ' +
        'git astedit undo takes it back.'),
      el('pre', null, JSON.stringify(report, null, 2)));
    main.append(done);
    document.getElementById('more-groups').hidden = true;
    document.body.dataset.applied = '1';
    say('Applied.');
  } catch (e) {
    busy = false;
    summarize();
    say('Apply failed: ' + e.message, true);
  }
}

function relayout() {
  sideBySide = !sideBySide;
  document.getElementById('layout').textContent = sideBySide ? 'Unified' : 'Side by side';
  for (const sec of document.querySelectorAll('#groups .group')) {
    const g = groupOf(sec.dataset.key);
    const old = sec.querySelector(':scope > .diff');
    if (old && g.representative) old.replaceWith(diffTable(g.representative));
    const l = loaded.get(g.key);
    for (const div of sec.querySelectorAll('.site')) {
      const s = l && l.sites.find((x) => x.id === div.dataset.id);
      if (s) div.querySelector('.diff').replaceWith(diffTable(s));
    }
  }
}

function showHelp(on) {
  document.getElementById('help').hidden = !on;
}

// ---- keys -----------------------------------------------------------------------

const KEYS = {
  j: () => {
    if (focus >= items().length - 1 && shownGroups < review.groups.length) renderMoreGroups();
    setFocus(focus + 1);
  },
  k: () => setFocus(focus - 1),
  a: () => decide(focused(), 'accept'),
  r: () => decide(focused(), 'reject'),
  u: () => decide(focused(), null),
  e: () => toggle(groupElOf(focused())).then(() => setFocus(items().indexOf(groupElOf(focused())))),
  m: () => {
    const sec = groupElOf(focused());
    return sec.querySelector('.sites') ? loadSites(sec) : toggle(sec);
  },
  s: () => relayout(),
  '?': () => showHelp(document.getElementById('help').hidden),
};
KEYS.ArrowDown = KEYS.j;
KEYS.ArrowUp = KEYS.k;
KEYS.Enter = KEYS.e;

function onKey(ev) {
  if (ev.ctrlKey || ev.metaKey || ev.altKey || !review || busy) return;
  if (ev.target instanceof HTMLButtonElement && (ev.key === 'Enter' || ev.key === ' ')) return;
  if (ev.key === 'Escape') { showHelp(false); return; }
  const f = KEYS[ev.key];
  if (!f) return;
  ev.preventDefault();
  Promise.resolve()
    .then(f)
    .catch((e) => say(e.message, true));
}

async function start() {
  document.getElementById('layout').addEventListener('click', relayout);
  document.getElementById('help-button').addEventListener('click', () => showHelp(true));
  document.getElementById('apply').addEventListener('click', apply);
  document.getElementById('load-groups').addEventListener('click', renderMoreGroups);
  document.addEventListener('keydown', onKey);
  try {
    review = await call('GET', '/api/review?representatives=' + FIRST_DRAWN);
    renderMoreGroups();
    summarize();
    setFocus(0);
    say(review.groups.length ? 'j/k to move, a to accept, r to reject, Enter for the sites, ? for keys.'
      : 'Nothing to review.');
    document.body.dataset.ready = '1';
  } catch (e) {
    say('Could not load the review: ' + e.message, true);
  }
}

document.addEventListener('DOMContentLoaded', start);
