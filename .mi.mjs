const b = process.memoryUsage();
for (const m of process.argv.slice(2)) await import(m);
const a = process.memoryUsage();
const f = (x) => (x / 1048576).toFixed(1);
console.log(process.argv.slice(2).join(' '), `rss +${f(a.rss-b.rss)} heapUsed +${f(a.heapUsed-b.heapUsed)} heapTotal +${f(a.heapTotal-b.heapTotal)}`);
