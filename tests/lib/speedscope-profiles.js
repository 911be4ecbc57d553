// Opens a speedscope URL in headless chromium (driven over --remote-debugging-pipe, so no
// port and no package beyond node) and saves the page as a person sees it for each profile of
// the file, stepping through them with the "n" key as a person would:
//	node tests/lib/speedscope-profiles.js URL OUTDIR [png]
// writes OUTDIR/profile-1.html, profile-2.html, ... (the DOM once speedscope's table has
// rows) and prints one line per profile: "profile I/N NAME". With png (a view drawn on a
// canvas, such as Time Order, which has no table) it waits for the profile's name instead
// and writes OUTDIR/profile-I.png too, a screenshot once two in a row are the same. Exits 1
// if the page never draws (after 60 s of waiting) or chromium fails. Chromium's profile is OUTDIR/chrome,
// HOME should be a clean directory (the caller sets it).
'use strict';
const fs = require('fs');
const { spawn } = require('child_process');

const [url, outdir, mode] = process.argv.slice(2);
const png = mode === 'png';
if (!url || !outdir) {
	console.error('usage: speedscope-profiles.js URL OUTDIR');
	process.exit(2);
}
const chrome = spawn('chromium', ['--headless', '--no-sandbox', '--disable-gpu',
	'--disable-background-networking', '--disable-component-update', '--disable-sync',
	'--no-first-run', '--window-size=1600,1000', '--remote-debugging-pipe',
	`--user-data-dir=${outdir}/chrome`, 'about:blank'],
{ stdio: ['ignore', 'ignore', fs.openSync(`${outdir}/chrome.err`, 'w'), 'pipe', 'pipe'] });
const deadline = setTimeout(() => die('no table drawn within 60 s'), 60000);
function die(why) {
	console.error('speedscope-profiles: ' + why);
	chrome.kill();
	process.exit(1);
}
chrome.on('exit', (code) => die(`chromium exited (${code})`));

/* The pipe carries NUL-terminated JSON messages: commands out on fd 3, replies on fd 4. */
let nextId = 1, buf = '';
const waiting = new Map();
chrome.stdio[4].on('data', (d) => {
	buf += d.toString();
	let i;
	while ((i = buf.indexOf('\0')) >= 0) {
		const msg = JSON.parse(buf.slice(0, i));
		buf = buf.slice(i + 1);
		if (msg.id && waiting.has(msg.id)) {
			waiting.get(msg.id)(msg);
			waiting.delete(msg.id);
		}
	}
});
function send(method, params = {}, sessionId) {
	const id = nextId++;
	chrome.stdio[3].write(JSON.stringify({ id, method, params, sessionId }) + '\0');
	return new Promise((resolve) => waiting.set(id, (m) => m.error ?
		die(`${method}: ${JSON.stringify(m.error)}`) : resolve(m.result)));
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/* The page's state as a person reads it: the toolbar's profile name and the table rows. */
const probe = `JSON.stringify({
	title: [...document.querySelectorAll('span')].map((d) => d.textContent)
		.filter((t) => /^[^(].*\\(\\d+\\/\\d+\\)$/.test(t)).sort((a, b) => a.length - b.length)[0] || '',
	rows: [...document.querySelectorAll('tr')].filter((r) => r.querySelector('td')).length,
	html: document.documentElement.outerHTML })`;

/* A screenshot once the canvas has stopped changing: two in a row alike, 300 ms apart. */
async function settled(sessionId) {
	let last = '';
	for (;;) {
		const { data } = await send('Page.captureScreenshot', { format: 'png' }, sessionId);
		if (data === last)
			return Buffer.from(data, 'base64');
		last = data;
		await sleep(300);
	}
}

async function main() {
	const { targetId } = await send('Target.createTarget', { url });
	const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
	/* a probe that lands while the page is still loading has no value: not drawn yet */
	const page = async () => {
		const r = await send('Runtime.evaluate', { expression: probe, returnByValue: true },
				     sessionId);
		return typeof r.result.value === 'string' ? JSON.parse(r.result.value) :
			{ rows: 0, title: '', html: '' };
	};
	let prev = null;
	for (;;) {
		/* rows with cells, a new profile's name, and the page unchanged for 200 ms: the
		   table can be drawn in steps (its header first) */
		let p, last = null;
		while (!((p = await page()).rows || png) || !p.title || p.title === prev ||
		       !last || last.html !== p.html) {
			last = p;
			await sleep(200);
		}
		const m = /^(.*?) ?\((\d+)\/(\d+)\)$/.exec(p.title);
		if (!m) {
			fs.writeFileSync(`${outdir}/page.html`, p.html);
			die(`no profile name in the toolbar: "${p.title}" (page.html)`);
		}
		fs.writeFileSync(`${outdir}/profile-${m[2]}.html`, p.html);
		if (png)
			fs.writeFileSync(`${outdir}/profile-${m[2]}.png`, await settled(sessionId));
		console.log(`profile ${m[2]}/${m[3]} ${m[1]}`);
		if (m[2] === m[3])
			break;
		prev = p.title;
		for (const type of ['keyDown', 'keyUp'])
			await send('Input.dispatchKeyEvent', { type, key: 'n', code: 'KeyN', text: 'n',
				windowsVirtualKeyCode: 78 }, sessionId);
	}
	clearTimeout(deadline);
	chrome.removeAllListeners('exit');
	chrome.kill();
}
main();
