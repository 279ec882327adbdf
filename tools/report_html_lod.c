/* SPDX-License-Identifier: BSD-3-Clause */
/* report_html_lod.c - the timeline's finer levels of detail in the page
 * (`tracer report --html`): the levels above 0 of report_bins.c as JSON in
 * <script type="application/json" id="lod">, and the script that zooms and
 * pans the timeline and, zoomed in, draws the visible bins of the finest
 * level that has at most ~2000 of them visible in a row into <g id="detail">
 * (the static level 0 in <g id="coarse"> hidden meanwhile).
 *
 * The JSON: {"t0": first tick, "span": ticks, "res": ticks per second,
 * "ms": span in ms, "nb0": level 0's bins, "step": REP_LOD_STEP, "row":
 * row height, "rows": [{"id": location id, "y": row top}, ...] (draw order),
 * "levels": [{"nb": bins, "r": [per row [begin_bin, end_bin, region,
 * height_permille, ...]], "l": [per row [begin_bin, end_bin,
 * width_permille, ...]]}, ...] (level 1 first), "names", "colors": per
 * region index of "r", "dropped": finer levels left out (LOD_BYTES)}.
 * Runs are what draw_row draws: bins one region fills merged (permille
 * 1000), else each of a bin's regions (largest first: stacked from the
 * bottom in that order) with its share of the bin; a lock wait's run as wide
 * as its share of the bins. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"

#define LOD_BYTES (8u << 20)   /* the levels' JSON at most (the page stays small enough to open) */

struct lod {
	const struct rep *r;
	FILE *f;
	uint32_t *map;          /* [nregions] region -> index in names, UINT32_MAX none yet */
	uint32_t *used;         /* [nregions] index -> region */
	size_t nused;
	size_t n;               /* numbers written in the current array */
	size_t bin;             /* the bin of the permille in sum */
	unsigned sum;
	long limit;             /* bytes of f at most (LOD_BYTES left) */
	size_t runs;
	int over;               /* f went over limit: the level is left out */
};

/* Every 4096 runs: over the limit? (then nothing more is written) */
static int full(struct lod *o)
{
	if (!o->over && ++o->runs % 4096 == 0 && (fflush(o->f) || ftell(o->f) > o->limit))
		o->over = 1;
	return o->over;
}

static unsigned permille(const struct rep_run *u)
{
	if (u->full)
		return 1000;
	double p = u->bt ? 1000.0 * (double)u->cov / (double)u->bt + 0.5 : 0;
	return p > 1000 ? 1000 : (unsigned)p;
}

static void put_region(void *ud, const struct rep_run *u)
{
	struct lod *o = ud;
	unsigned p = permille(u);
	if (full(o))
		return;
	if (u->b != o->bin) {
		o->bin = u->b;
		o->sum = 0;
	}
	if (p > 1000 - o->sum)   /* a bin's regions: not above the row (as draw_row clips) */
		p = 1000 - o->sum;
	if (!p)
		return;
	o->sum += p;
	if (o->map[u->ri] == UINT32_MAX) {
		o->map[u->ri] = (uint32_t)o->nused;
		o->used[o->nused++] = u->ri;
	}
	fprintf(o->f, "%s%zu,%zu,%" PRIu32 ",%u", o->n++ ? "," : "", u->b, u->e, o->map[u->ri], p);
}

static void put_lock(void *ud, const struct rep_run *u)
{
	struct lod *o = ud;
	unsigned p = permille(u);
	if (p && !full(o))
		fprintf(o->f, "%s%zu,%zu,%u", o->n++ ? "," : "", u->b, u->e, p);
}

/* Runs of level l of every row, in draw order, into o->f: {"nb":..,"r":..,"l":..}. */
static void put_level(struct lod *o, size_t l)
{
	const struct rep *r = o->r;
	for (int lock = 0; lock < 2; lock++) {
		if (!lock)
			fprintf(o->f, "{\"nb\":%" PRIu32 ",\"r\":[", r->locs[0].lod[l].nb);
		else
			fputs("],\"l\":[", o->f);
		int first = 1;
		for (size_t g = 0; g < r->ngroups; g++)
			for (size_t i = 0; r->groups[g].nlocs && i < r->nlocs; i++) {
				if (r->locs[i].group != g)
					continue;
				fputs(first ? "[" : ",[", o->f);
				first = 0;
				o->n = 0;
				o->bin = SIZE_MAX;
				rep_bins_runs(&r->locs[i].lod[l], r, lock, lock ? put_lock : put_region, o);
				fputc(']', o->f);
			}
	}
	fputs("]}", o->f);
}

static void emit_script(void *ud, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)   /* no "</script" in the element: '<' escaped */
		if (p[i] == '<')
			fputs("\\u003c", ud);
		else
			fputc(p[i], ud);
}

size_t rep_html_lod(const struct rep *r, int row_h, char **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	size_t kept = 0, bytes = 0;
	struct lod o = { .r = r, .map = rep_xcalloc(r->nregions, sizeof *o.map),
			 .used = rep_xcalloc(r->nregions, sizeof *o.used) };
	memset(o.map, 0xff, r->nregions * sizeof *o.map);
	FILE *f = open_memstream(out, len);
	if (!f)
		goto out;
	fprintf(f, "<script type=\"application/json\" id=\"lod\">{\"t0\":%" PRIu64 ",\"span\":%" PRIu64
		",\"res\":%" PRIu64 ",\"ms\":%.9g,\"nb0\":%d,\"step\":%d,\"row\":%d,\"rows\":[", r->t0, r->t1 - r->t0,
		r->resolution, rep_ms(r, r->t1 - r->t0), REP_NBINS, REP_LOD_STEP, row_h);
	int y = 0, first = 1;
	for (size_t g = 0; g < r->ngroups; g++) {
		if (!r->groups[g].nlocs)
			continue;
		y += row_h;
		for (size_t i = 0; i < r->nlocs; i++)
			if (r->locs[i].group == g) {
				fprintf(f, "%s{\"id\":%" PRIu64 ",\"y\":%d}", first ? "" : ",", r->locs[i].id, y);
				first = 0;
				y += row_h;
			}
	}
	fputs("],\"levels\":[", f);
	/* each level in a buffer of its own: kept while all fit in LOD_BYTES,
	 * the finer ones (larger) left out from the first that does not */
	for (size_t l = 1; l < r->nlod; l++) {
		char *buf = NULL;
		size_t n = 0, nused = o.nused;
		o.f = open_memstream(&buf, &n);
		if (!o.f)
			break;
		o.limit = (long)(LOD_BYTES - bytes);
		o.over = 0;
		put_level(&o, l);
		int bad = fclose(o.f) != 0;
		if (bad || o.over || bytes + n > LOD_BYTES) {
			for (size_t k = nused; k < o.nused; k++)   /* its regions: not named */
				o.map[o.used[k]] = UINT32_MAX;
			o.nused = nused;
			free(buf);
			break;
		}
		fprintf(f, "%s%s", kept ? "," : "", buf);
		free(buf);
		bytes += n;
		kept++;
	}
	fputs("],\"names\":[", f);
	for (size_t k = 0; k < o.nused; k++) {
		fputs(k ? "," : "", f);
		rep_json_escape(r->region_names[o.used[k]], emit_script, f);
	}
	fputs("],\"colors\":[", f);
	for (size_t k = 0; k < o.nused; k++) {
		char c[32];
		rep_html_color(r, o.used[k], c, sizeof c);
		fprintf(f, "%s\"%s\"", k ? "," : "", c);
	}
	fprintf(f, "],\"dropped\":%zu}</script>\n", r->nlod - 1 - kept);
	if (fclose(f)) {
		free(*out);
		*out = NULL;
		*len = 0;
		kept = 0;
	}
out:
	free(o.map);
	free(o.used);
	return kept;
}

/* The timeline: zoom (wheel, down to a bin of the finest level) and pan
 * (drag) by the transform of #bars and #msgs (x: level-0 bins); at each
 * change the finest level with at most 2000 bins visible in a row, its runs
 * of the visible bins and half a window's each side drawn into #detail
 * (coordinates: that level's bins from the first drawn, so that the
 * browser's float geometry stays exact deep in), again when the view
 * leaves them or is less than a quarter of them; the critical path's
 * bars and lines in #cpath (report_html.c) placed again from their data-a,
 * data-b (level-0 bins) in the window's coordinates (x0 at 0, clipped to a
 * window each side: small numbers, exact deep in); the axis shows the
 * visible window. #zoom=T0,T1 (ms from the start) in the address: that
 * window at load. */
const char rep_html_timeline_js[] =
	"(function(){var s=document.getElementById('tl');if(!s)return;"
	"var W=+s.dataset.w,L=+s.dataset.l,x0=0,w=W,drag=null;"
	"var g=document.getElementById('bars'),ms=document.getElementById('msgs'),"
	"co=document.getElementById('coarse'),de=document.getElementById('detail'),tip=document.getElementById('tip');"
	"var ax=document.getElementById('axis'),MS=ax?+ax.dataset.ms:0,D=null,el=document.getElementById('lod');"
	"try{D=el?JSON.parse(el.textContent):null;}catch(x){D=null;}"
	"var lv=D?D.levels:[],minw=lv.length?W/lv[lv.length-1].nb:W/1000,cur=-1,d0=0,d1=0;"
	"var cp=document.getElementById('cpath'),cq=cp?[].map.call(cp.children,function(e){"
	"return [e,+e.getAttribute('data-a'),+e.getAttribute('data-b'),e.tagName==='line'];}):[];"
	"function cl(v){return Math.max(-W,Math.min(2*W,v));}"
	"function path(){for(var i=0,S=W/w;i<cq.length;i++){var c=cq[i],a=cl((c[1]-x0)*S);"
	"if(c[3]){c[0].setAttribute('x1',a);c[0].setAttribute('x2',a);}"
	"else{c[0].setAttribute('x',a);c[0].setAttribute('width',cl((c[2]-x0)*S)-a);}}}"
	"function dig(t){return t>0?Math.min(9,Math.max(3,Math.ceil(-Math.log10(t))+1)):3;}"
	"function esc(t){return t.replace(/&/g,'&amp;').replace(/</g,'&lt;').replace(/\"/g,'&quot;');}"
	"function first(a,n,b){var lo=0,hi=a.length/n;while(lo<hi){var m=(lo+hi)>>1;"
	"if(a[m*n+1]>b)hi=m;else lo=m+1;}return lo*n;}"
	"function draw(k){var V=lv[k],u=W/V.nb,n=Math.ceil(w/u),b0=Math.max(0,Math.floor(x0/u)-(n>>1)),"
	"b1=Math.min(V.nb,Math.ceil((x0+w)/u)+(n>>1)),bm=MS/V.nb,dg=dig(bm),R=D.rows,rh=D.row,h=[];"
	"function tm(b,e){return (b*bm).toFixed(dg)+'-'+(e*bm).toFixed(dg)+' ms';}"
	"for(var i=0;i<R.length;i++){var y=R[i].y,a=V.r[i],j,last=-1,bot=0;"
	"for(j=first(a,4,b0);j<a.length&&a[j]<b1;j+=4){var b=a[j],e=a[j+1],ri=a[j+2],p=a[j+3],"
	"hg=(rh-4)*p/1000;if(b!==last){bot=y+rh-2;last=b;}bot-=hg;"
	"h.push('<rect x=\"'+(b-b0)+'\" y=\"'+bot.toFixed(2)+'\" width=\"'+(e-b)+'\" height=\"'+hg.toFixed(2)+"
	"'\" fill=\"'+D.colors[ri]+'\" data-t=\"'+esc(D.names[ri])+' | '+tm(b,e)+(p<1000?', '+(p/10)+'%':'')+'\"/>');}"
	"a=V.l[i];for(j=first(a,3,b0);j<a.length&&a[j]<b1;j+=3)"
	"h.push('<rect class=\"lockwait\" x=\"'+(a[j]-b0)+'\" y=\"'+(y+rh-3)+'\" width=\"'+"
	"((a[j+1]-a[j])*a[j+2]/1000)+'\" height=\"3\" fill=\"#d00\" data-t=\"lock wait | '+tm(a[j],a[j+1])+'\"/>');}"
	"de.innerHTML=h.join('');cur=k;d0=b0;d1=b1;}"
	"function upd(){var t='translate('+L+',0) scale('+(W/w)+',1) translate('+(-x0)+',0)',k=-1;"
	"g.setAttribute('transform',t);ms.setAttribute('transform',t);path();"
	"for(var i=0;i<lv.length;i++)if(lv[i].nb*w/W<=2000)k=i;"
	"if(k<0){co.style.display='';de.style.display='none';cur=-1;}else{var u=W/lv[k].nb;"
	"if(k!==cur||x0/u<d0||(x0+w)/u>d1||d1-d0>4*w/u+8)draw(k);co.style.display='none';de.style.display='';"
	"de.setAttribute('transform','translate('+(L+(d0*u-x0)*W/w)+',0) scale('+(u*W/w)+',1)');}"
	"if(ax){var dg=dig(w/W*MS/10);ax.querySelectorAll('span').forEach(function(e,i){"
	"e.textContent=((x0+i*w/10)/W*MS).toFixed(dg)+' ms';});}}"
	"function hash(){var m=/#zoom=([0-9.eE+-]+),([0-9.eE+-]+)/.exec(location.hash);if(!m||!MS)return;"
	"var a=+m[1],b=+m[2];if(!(b>a))return;w=Math.min(W,Math.max(minw,(b-a)/MS*W));"
	"x0=Math.min(W-w,Math.max(0,a/MS*W));upd();}"
	"s.addEventListener('wheel',function(e){e.preventDefault();var r=s.getBoundingClientRect();"
	"var f=Math.max(0,(e.clientX-r.left)/r.width*(W+L)-L)/W,c=x0+f*w,k=e.deltaY<0?0.8:1.25;"
	"w=Math.min(W,Math.max(minw,w*k));x0=Math.min(W-w,Math.max(0,c-f*w));upd();});"
	"s.addEventListener('mousedown',function(e){drag=[e.clientX,x0];});"
	"window.addEventListener('mouseup',function(){drag=null;});"
	"s.addEventListener('mousemove',function(e){if(drag){var r=s.getBoundingClientRect();"
	"x0=Math.min(W-w,Math.max(0,drag[1]-(e.clientX-drag[0])/r.width*(W+L)*w/W));upd();}"
	"var t=e.target.getAttribute&&e.target.getAttribute('data-t');"
	"if(t){tip.textContent=t;tip.style.display='block';tip.style.left=(e.clientX+12)+'px';"
	"tip.style.top=(e.clientY+12)+'px';}else tip.style.display='none';});"
	"window.addEventListener('hashchange',hash);upd();hash();})();";
