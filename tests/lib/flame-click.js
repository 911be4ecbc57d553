// Runs the script of an opreport --flame SVG outside a browser, against the smallest DOM it
// uses, and prints what each frame shows after each action:
//	node tests/lib/flame-click.js FILE.svg ACTION...
// An ACTION is NAME@DEPTH (click that frame's rectangle), "background" (click it),
// "search:REGEXP" (type REGEXP into the search box), "ctrl+f" (press Ctrl-F), "escape"
// (press Escape) or "unsearch" (click "reset"). After each it prints "click ACTION", then one
// line per frame in document order:
//	NAME DEPTH shown|hidden OPACITY X WIDTH LABEL FILL
// (OPACITY "-" when not dimmed; LABEL "-" when the frame shows no text; FILL "hit" when the
// search coloured it, else "-"), then "matched: TEXT" (what the page says matched) and, after
// ctrl+f, "focus: search" when the search box got the focus.
'use strict';
const fs = require('fs');

const [file, ...clicks] = process.argv.slice(2);
if (!file || !clicks.length) {
	console.error('usage: flame-click.js FILE.svg NAME@DEPTH|background...');
	process.exit(2);
}
const svg = fs.readFileSync(file, 'utf8');

const unxml = (s) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"')
	.replace(/&apos;/g, "'").replace(/&amp;/g, '&');
const attrsOf = (s) => {
	const a = {};
	for (const m of s.matchAll(/([\w-]+)="([^"]*)"/g))
		a[m[1]] = unxml(m[2]);
	return a;
};

class Elem {
	constructor(tag, attrs, parent) {
		this.tag = tag;
		this.attrs = attrs;
		this.parent = parent;
		this.kids = [];
		this.style = { display: '', opacity: '' };
		this.textContent = '';
	}
	get id() { return this.attrs.id; }
	focus() { focused = this.attrs.id; }
	getAttribute(n) { return n in this.attrs ? this.attrs[n] : null; }
	setAttribute(n, v) { this.attrs[n] = String(v); }
	querySelector(sel) { return this.kids.find((k) => k.tag === sel) || null; }
	closest(sel) {
		for (let e = this; e; e = e.parent)
			if (sel === 'g.f' && e.tag === 'g' && e.attrs.class === 'f')
				return e;
		return null;
	}
}

// Every frame is <g class="f" ...><title>..</title><rect .../><text ...>label</text></g>.
const frames = [];
for (const m of svg.matchAll(/<g class="f"([^>]*)>([\s\S]*?)<\/g>/g)) {
	const g = new Elem('g', Object.assign({ class: 'f' }, attrsOf(m[1])), null);
	const r = /<rect([^>]*)\/>/.exec(m[2]), t = /<text([^>]*)>([^<]*)<\/text>/.exec(m[2]);
	if (!r || !t) {
		console.error(`frame without rect or text: ${m[0].slice(0, 80)}`);
		process.exit(1);
	}
	const rect = new Elem('rect', attrsOf(r[1]), g), text = new Elem('text', attrsOf(t[1]), g);
	text.textContent = unxml(t[2]);
	g.kids.push(rect, text);
	frames.push(g);
}
const script = /<script[^>]*><!\[CDATA\[([\s\S]*?)\]\]><\/script>/.exec(svg);
if (!frames.length || !script) {
	console.error(`${file}: no frames or no script`);
	process.exit(1);
}

// The search box, the "reset" link and the matched-share line, by id.
let focused = null;
const byId = {};
for (const id of ['search', 'unsearch', 'matched']) {
	if (!new RegExp(`id="${id}"`).test(svg)) {
		console.error(`${file}: no element with id ${id}`);
		process.exit(1);
	}
	byId[id] = new Elem(id === 'search' ? 'input' : 'text', { id }, null);
	byId[id].value = '';
}
const listeners = { click: [], input: [], keydown: [] };
const document = {
	querySelectorAll: (sel) => (sel === 'g.f' ? frames : []),
	getElementById: (id) => byId[id] || null,
	addEventListener: (type, fn) => { if (listeners[type]) listeners[type].push(fn); },
};
new Function('document', script[1])(document);
if (!listeners.click.length || !listeners.input.length || !listeners.keydown.length) {
	console.error(`${file}: the script does not listen for clicks, input and keys`);
	process.exit(1);
}
const fire = (type, ev) => listeners[type].forEach((fn) => fn(ev));

const background = new Elem('svg', {}, null);
for (const c of clicks) {
	focused = null;
	if (c.startsWith('search:')) {
		byId.search.value = c.slice(7);
		fire('input', { target: byId.search });
	} else if (c === 'ctrl+f' || c === 'escape') {
		fire('keydown', { ctrlKey: c === 'ctrl+f', key: c === 'ctrl+f' ? 'f' : 'Escape',
				  preventDefault() {} });
	} else if (c === 'unsearch') {
		fire('click', { target: byId.unsearch });
	} else {
		let target = background;
		if (c !== 'background') {
			const at = c.lastIndexOf('@'), name = c.slice(0, at), depth = c.slice(at + 1);
			const g = frames.find((f) => f.attrs['data-n'] === name && f.attrs['data-d'] === depth);
			if (!g) {
				console.error(`no frame ${c}`);
				process.exit(1);
			}
			target = g.kids[0];
		}
		fire('click', { target });
	}
	console.log(`click ${c}`);
	for (const g of frames) {
		const r = g.kids[0], t = g.kids[1];
		console.log([g.attrs['data-n'], g.attrs['data-d'],
			g.style.display === 'none' ? 'hidden' : 'shown', g.style.opacity || '-',
			r.attrs.x, r.attrs.width, t.textContent || '-',
			r.attrs.fill === r.attrs['data-fill'] ? '-' : 'hit'].join(' '));
	}
	console.log(`matched: ${byId.matched.textContent}`);
	if (focused)
		console.log(`focus: ${focused}`);
}
