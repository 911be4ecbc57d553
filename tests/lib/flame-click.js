// Runs the click-to-zoom script of an opreport --flame SVG outside a browser, against the
// smallest DOM it uses, and prints what each frame shows after each click:
//	node tests/lib/flame-click.js FILE.svg CLICK...
// A CLICK is NAME@DEPTH (click that frame's rectangle) or "background". After each click
// it prints "click CLICK", then one line per frame in document order:
//	NAME DEPTH shown|hidden OPACITY X WIDTH LABEL
// (OPACITY "-" when not dimmed; LABEL "-" when the frame shows no text).
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

const listeners = [];
const document = {
	querySelectorAll: (sel) => (sel === 'g.f' ? frames : []),
	addEventListener: (type, fn) => { if (type === 'click') listeners.push(fn); },
};
new Function('document', script[1])(document);
if (!listeners.length) {
	console.error(`${file}: the script listens for no click`);
	process.exit(1);
}

const background = new Elem('svg', {}, null);
for (const c of clicks) {
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
	listeners.forEach((fn) => fn({ target }));
	console.log(`click ${c}`);
	for (const g of frames) {
		const r = g.kids[0], t = g.kids[1];
		console.log([g.attrs['data-n'], g.attrs['data-d'],
			g.style.display === 'none' ? 'hidden' : 'shown', g.style.opacity || '-',
			r.attrs.x, r.attrs.width, t.textContent || '-'].join(' '));
	}
}
