// The page's language. Its sentences are marked as the host's are, _("...") and
// n_("...", "...", n), with named placeholders (%(name)s, %(count)d): `make catalogs` extracts
// them into the same catalogs (cribboard/locale/<lang>/LC_MESSAGES/cribboard.po) and the bridge
// serves each compiled catalog as i18n/<lang>.json. English is the source: no catalog needed.
// The language is the one chosen in the page's menu (remembered in localStorage), else the
// first of the browser's languages the page speaks, else English.

const STORE_KEY = "cribboard.lang";
const SOURCE = "en";
const ALIASES = { no: "nb", nb: "nb" }; // Norwegian is read as bokmål

let catalog = { language: SOURCE, messages: {}, plurals: {} };
let pluralIndex = (n) => (n !== 1 ? 1 : 0);
let languages = { [SOURCE]: "English" };
const listeners = [];

function fill(template, values) {
  return template.replace(/%\((\w+)\)([sd])/g, (_, name) => String(values[name]));
}

// A sentence in the language in use, its placeholders filled from `values`.
export function _(message, values = {}) {
  return fill(catalog.messages[message] || message, values);
}

// The singular or plural sentence for `count`; `count` fills %(count)d unless given.
export function n_(singular, plural, count, values = {}) {
  const forms = catalog.plurals[singular];
  const text = forms ? forms[Math.min(pluralIndex(count), forms.length - 1)]
                     : (count === 1 ? singular : plural);
  return fill(text, { count, ...values });
}

// Marks a sentence for the catalog, translated where it is shown with _().
export const N_ = (message) => message;

// gettext's Plural-Forms rule, a C expression in n, as a function. Only the characters such a
// rule is made of are accepted; any other text keeps the English rule.
function compilePlural(expression) {
  if (typeof expression !== "string" || !/^[n0-9\s()!=<>&|?:%+\-*/]*$/.test(expression)) {
    return (n) => (n !== 1 ? 1 : 0);
  }
  const rule = new Function("n", `return Number(${expression});`);
  return (n) => rule(n);
}

export function language() {
  return catalog.language;
}

export function languageNames() {
  return { ...languages };
}

// Called with the language's code after each change of language (the page redraws its text).
export function onLanguage(callback) {
  listeners.push(callback);
}

function known(tag) {
  const primary = String(tag || "").toLowerCase().replace("_", "-").split("-")[0];
  const code = ALIASES[primary] || primary;
  return code in languages ? code : null;
}

async function fetchJson(path) {
  const r = await fetch(path, { credentials: "same-origin" });
  if (!r.ok) throw new Error(`${path}: ${r.status}`);
  return r.json();
}

function stored() {
  try { return localStorage.getItem(STORE_KEY); } catch { return null; }
}

// The languages there are (i18n/languages.json), then the one to speak: the menu's choice
// remembered, else the browser's languages in order. Without the catalogs (a page served
// without them) the page speaks English.
export async function startLanguage() {
  try {
    languages = (await fetchJson("i18n/languages.json")).languages;
  } catch {
    return SOURCE;
  }
  const wanted = [stored(), ...(navigator.languages || [navigator.language])];
  const code = wanted.map(known).find(Boolean) || SOURCE;
  await loadLanguage(code);
  return code;
}

// Speak `code` from now on; `remember` keeps the choice for the next visit. The language
// already spoken is not fetched or redrawn again (a page redrawing under a reader's finger for
// nothing, and a reader who waits on `lang` could meet the old words).
export async function setLanguage(code, remember = true) {
  const chosen = known(code) || SOURCE;
  if (chosen !== catalog.language) {
    await loadLanguage(chosen);
    for (const callback of listeners) callback(catalog.language);
  }
  if (remember) {
    try { localStorage.setItem(STORE_KEY, chosen); } catch { /* private mode: not kept */ }
  }
}

async function loadLanguage(code) {
  const next = await fetchJson(`i18n/${code}.json`);
  catalog = { language: code, messages: next.messages || {}, plurals: next.plurals || {} };
  pluralIndex = compilePlural(next.plural);
  document.documentElement.lang = code;
}
