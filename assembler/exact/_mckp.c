/* The multiple-choice knapsack kernel over C integers: mckp_twin.py, step for step.
 *
 * Input: int64 arrays (anything with the buffer protocol and 8-byte integers:
 * array('q'), numpy int64) and integers, as the twin takes them.
 * Output: (status, list of chosen indices), as the twin returns them.
 *
 * solve_items(start, cost, value, weight, cap, deadline_at, state_limit): the items'
 *   options are given (mckp_twin.solve_items).
 * solve_coupled(identity_of, cost, value, weight, identities, required, group_start,
 *   group_members, cap, deadline_at, state_limit, option_limit): the items are made here
 *   from the forms of a problem without dependency edges (mckp_twin.solve_coupled);
 *   the chosen indices are forms.
 *
 * Arithmetic: costs, values and weights fit int64 (a request's costs sum to at most
 * 2^53 - 1, values to 1000 a form, weights to 2^32 a form); products of a value and a
 * cost (reduced profits scaled by the multiplier's denominator) are __int128.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int64_t i64;
typedef __int128 i128;

enum { OPTIMAL = 0, TIE = 1, LIMIT = 2, INFEASIBLE = 3, DEADLINE = 4, NO_MEMORY = -1 };

typedef struct {
    i64 c, v, w, id; /* id: the option's index in the caller's arrays */
} Option;

typedef struct {
    i64 c, v, w, opt;
    int64_t parent;
    int tie;
} State;

typedef struct {
    i64 dv, dc;
} Segment;

typedef struct {
    i128 gap;
    i64 item, id, pos;
} Upgrade;

static double now_monotonic(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int by_cost(const void *x, const void *y) {
    const Option *a = x, *b = y;
    if (a->c != b->c) return a->c < b->c ? -1 : 1;
    if (a->v != b->v) return a->v > b->v ? -1 : 1;
    if (a->w != b->w) return a->w < b->w ? -1 : 1;
    return 0;
}

/* falling slope, then falling rise (the twin's reverse sort of _SlopeKey) */
static int by_slope(const void *x, const void *y) {
    const Segment *a = x, *b = y;
    i128 left = (i128)a->dv * b->dc, right = (i128)b->dv * a->dc;
    if (left != right) return left > right ? -1 : 1;
    if (a->dv != b->dv) return a->dv > b->dv ? -1 : 1;
    return 0;
}

static int ascending(const void *x, const void *y) {
    i64 a = *(const i64 *)x, b = *(const i64 *)y;
    return (a > b) - (a < b);
}

static int by_gap(const void *x, const void *y) {
    const Upgrade *a = x, *b = y;
    if (a->gap != b->gap) return a->gap < b->gap ? -1 : 1;
    if (a->item != b->item) return a->item < b->item ? -1 : 1;
    if (a->id != b->id) return a->id < b->id ? -1 : 1;
    return 0;
}

/* a growable array of states */
typedef struct {
    State *at;
    Py_ssize_t size, room;
} States;

static int push(States *s, const State *x) {
    if (s->size == s->room) {
        Py_ssize_t room = s->room ? 2 * s->room : 64;
        State *grown = realloc(s->at, (size_t)room * sizeof(State));
        if (!grown) return -1;
        s->at = grown;
        s->room = room;
    }
    s->at[s->size++] = *x;
    return 0;
}

/* the Pareto frontier of a and b into out (see the twin's _merge) */
static int merge(const States *a, const States *b, States *out) {
    Py_ssize_t i = 0, j = 0;
    out->size = 0;
    while (i < a->size || j < b->size) {
        const State *x;
        if (j >= b->size) {
            x = &a->at[i++];
        } else if (i >= a->size) {
            x = &b->at[j++];
        } else {
            const State *p = &a->at[i], *q = &b->at[j];
            int a_first = p->c < q->c || (p->c == q->c && (p->v > q->v || (p->v == q->v && p->w <= q->w)));
            x = a_first ? &a->at[i++] : &b->at[j++];
        }
        if (out->size) {
            State *last = &out->at[out->size - 1];
            if (x->v <= last->v) {
                if (x->v == last->v && x->c == last->c && x->w == last->w) last->tie = 1;
                continue;
            }
        }
        if (push(out, x)) return -1;
    }
    return 0;
}

/* The kernel on items whose options are opts[start[i]..start[i+1]) (ids the caller's
 * option indices); chosen[i] receives the id each item takes. */
static int solve(Py_ssize_t items, const i64 *start, Option *opts, i64 cap, double deadline_at,
                 i64 state_limit, i64 *chosen) {
    int status = NO_MEMORY;
    Py_ssize_t total = start[items];
    /* kept options per item, in place: kstart/kend; tied flags by position */
    Py_ssize_t *kend = malloc(sizeof(Py_ssize_t) * (size_t)(items + 1));
    unsigned char *tied = calloc((size_t)total + 1, 1);
    Py_ssize_t *free_items = malloc(sizeof(Py_ssize_t) * (size_t)(items + 1));
    Segment *segs = malloc(sizeof(Segment) * (size_t)(total + 1));
    Py_ssize_t *hull = malloc(sizeof(Py_ssize_t) * (size_t)(total + 1));
    i128 *best = malloc(sizeof(i128) * (size_t)(items + 1));
    Py_ssize_t *pick = malloc(sizeof(Py_ssize_t) * (size_t)(items + 1)); /* position */
    Upgrade *ups = malloc(sizeof(Upgrade) * (size_t)(total + 1));
    Py_ssize_t *core = malloc(sizeof(Py_ssize_t) * (size_t)(items + 1));
    i128 *later = malloc(sizeof(i128) * (size_t)(items + 2));
    Py_ssize_t *steps = malloc(sizeof(Py_ssize_t) * (size_t)(items + 2));
    unsigned char *in_core = calloc((size_t)items + 1, 1);
    States front = {0}, shifted = {0}, acc = {0}, out = {0}, hist = {0};
    if (!kend || !tied || !free_items || !segs || !hull || !best || !pick || !ups || !core ||
        !later || !steps || !in_core)
        goto done;

    /* 1. undominated options of each item, cheapest first */
    Py_ssize_t nfree = 0;
    i64 room = cap, least = 0;
    for (Py_ssize_t i = 0; i < items; i++) {
        Py_ssize_t s = start[i], e = start[i + 1], k = s;
        qsort(opts + s, (size_t)(e - s), sizeof(Option), by_cost);
        for (Py_ssize_t o = s; o < e; o++) {
            if (k > s && opts[o].v <= opts[k - 1].v) {
                Option *last = &opts[k - 1];
                if (opts[o].v == last->v && opts[o].c == last->c && opts[o].w == last->w) tied[k - 1] = 1;
                continue;
            }
            opts[k++] = opts[o];
        }
        kend[i] = k;
        pick[i] = s;
        chosen[i] = opts[s].id;
        if (k - s == 1) {
            room -= opts[s].c;
        } else {
            free_items[nfree++] = i;
            least += opts[s].c;
        }
    }
    if (room < 0 || least > room) {
        status = INFEASIBLE;
        goto done;
    }

    /* 2. the multiplier */
    Py_ssize_t nseg = 0;
    for (Py_ssize_t f = 0; f < nfree; f++) {
        Py_ssize_t i = free_items[f], h = 0;
        for (Py_ssize_t o = start[i]; o < kend[i]; o++) {
            while (h >= 2) {
                const Option *a = &opts[hull[h - 2]], *b = &opts[hull[h - 1]], *x = &opts[o];
                if ((i128)(b->v - a->v) * (x->c - b->c) <= (i128)(x->v - b->v) * (b->c - a->c))
                    h--;
                else
                    break;
            }
            hull[h++] = o;
        }
        for (Py_ssize_t k = 0; k + 1 < h; k++) {
            segs[nseg].dv = opts[hull[k + 1]].v - opts[hull[k]].v;
            segs[nseg].dc = opts[hull[k + 1]].c - opts[hull[k]].c;
            nseg++;
        }
    }
    qsort(segs, (size_t)nseg, sizeof(Segment), by_slope);
    i64 p = 0, q = 1, used = least;
    for (Py_ssize_t k = 0; k < nseg; k++) {
        if (used + segs[k].dc > room) {
            p = segs[k].dv;
            q = segs[k].dc;
            break;
        }
        used += segs[k].dc;
    }

    /* 3. the incumbent */
    i64 spent = 0;
    i128 bound = (i128)p * room;
    for (Py_ssize_t f = 0; f < nfree; f++) {
        Py_ssize_t i = free_items[f];
        i128 top = 0;
        for (Py_ssize_t o = start[i]; o < kend[i]; o++) {
            i128 reduced = (i128)q * opts[o].v - (i128)p * opts[o].c;
            if (o == start[i] || reduced > top) {
                top = reduced;
                pick[i] = o;
            }
        }
        best[i] = top;
        bound += top;
        spent += opts[pick[i]].c;
    }
    i64 slack = room - spent;
    if (slack < 0) {
        status = LIMIT;
        goto done;
    }
    Py_ssize_t nup = 0;
    for (Py_ssize_t f = 0; f < nfree; f++) {
        Py_ssize_t i = free_items[f];
        for (Py_ssize_t o = start[i]; o < kend[i]; o++) {
            if (opts[o].v > opts[pick[i]].v) {
                ups[nup].gap = best[i] - ((i128)q * opts[o].v - (i128)p * opts[o].c);
                ups[nup].item = i;
                ups[nup].id = opts[o].id;
                ups[nup].pos = o;
                nup++;
            }
        }
    }
    qsort(ups, (size_t)nup, sizeof(Upgrade), by_gap);
    for (Py_ssize_t k = 0; k < nup; k++) {
        Py_ssize_t i = ups[k].item, o = ups[k].pos, now = pick[i];
        if (opts[o].v > opts[now].v && opts[o].c - opts[now].c <= slack) {
            slack -= opts[o].c - opts[now].c;
            pick[i] = o;
        }
    }
    i64 floor_v = 0;
    for (Py_ssize_t f = 0; f < nfree; f++) floor_v += opts[pick[free_items[f]]].v;

    /* 4. reduced-cost fixing */
    i128 lead = bound - (i128)q * floor_v;
    Py_ssize_t ncore = 0;
    for (Py_ssize_t f = 0; f < nfree; f++) {
        Py_ssize_t i = free_items[f], k = start[i];
        for (Py_ssize_t o = start[i]; o < kend[i]; o++) {
            if (best[i] - ((i128)q * opts[o].v - (i128)p * opts[o].c) <= lead) {
                opts[k] = opts[o];
                tied[k] = tied[o];
                k++;
            }
        }
        kend[i] = k;
        if (k - start[i] == 1) {
            pick[i] = start[i];
            room -= opts[start[i]].c;
            floor_v -= opts[start[i]].v;
        } else {
            core[ncore++] = i;
            in_core[i] = 1;
        }
    }
    for (Py_ssize_t f = 0; f < nfree; f++) chosen[free_items[f]] = opts[pick[free_items[f]]].id;
    int tie_outside = 0;
    for (Py_ssize_t i = 0; i < items; i++) {
        if (!in_core[i] && tied[pick[i]]) tie_outside = 1;
    }
    if (ncore == 0) {
        status = tie_outside ? TIE : OPTIMAL;
        goto done;
    }

    /* 5. the program over the core's frontier */
    later[ncore] = 0;
    for (Py_ssize_t k = ncore - 1; k >= 0; k--) later[k] = later[k + 1] + best[core[k]];
    i128 scaled_floor = (i128)q * floor_v;
    State origin = {0, 0, 0, -1, -1, 0};
    if (push(&front, &origin)) goto done;
    i64 made = 1;
    for (Py_ssize_t k = 0; k < ncore; k++) {
        if (deadline_at <= now_monotonic()) {
            status = DEADLINE;
            goto done;
        }
        Py_ssize_t i = core[k];
        i128 rest = later[k + 1];
        int first = 1;
        for (Py_ssize_t o = start[i]; o < kend[i]; o++) {
            const Option *x = &opts[o];
            shifted.size = 0;
            for (Py_ssize_t s = 0; s < front.size; s++) {
                State y;
                y.c = front.at[s].c + x->c;
                if (y.c > room) break;
                y.v = front.at[s].v + x->v;
                if ((i128)q * y.v + (i128)p * (room - y.c) + rest < scaled_floor) continue;
                y.w = front.at[s].w + x->w;
                y.tie = front.at[s].tie || tied[o];
                y.parent = s;
                y.opt = x->id;
                if (push(&shifted, &y)) goto done;
            }
            made += shifted.size;
            if (first) {
                States t = acc;
                acc = shifted;
                shifted = t;
                first = 0;
            } else {
                if (merge(&acc, &shifted, &out)) goto done;
                States t = acc;
                acc = out;
                out = t;
            }
        }
        if (made > state_limit || acc.size == 0) {
            status = LIMIT;
            goto done;
        }
        steps[k] = hist.size;
        for (Py_ssize_t s = 0; s < acc.size; s++) {
            if (push(&hist, &acc.at[s])) goto done;
        }
        States t = front;
        front = acc;
        acc = t;
        acc.size = 0;
    }
    Py_ssize_t state = front.size - 1;
    if (front.at[state].tie || tie_outside) {
        status = TIE;
        goto done;
    }
    for (Py_ssize_t k = ncore - 1; k >= 0; k--) {
        const State *y = &hist.at[steps[k] + state];
        chosen[core[k]] = y->opt;
        state = (Py_ssize_t)y->parent;
    }
    status = OPTIMAL;

done:
    free(kend);
    free(tied);
    free(free_items);
    free(segs);
    free(hull);
    free(best);
    free(pick);
    free(ups);
    free(core);
    free(later);
    free(steps);
    free(in_core);
    free(front.at);
    free(shifted.at);
    free(acc.at);
    free(out.at);
    free(hist.at);
    return status;
}

/* an int64 view of a buffer */
typedef struct {
    Py_buffer view;
    const i64 *at;
    Py_ssize_t size;
    int held;
} Column;

static int column(PyObject *obj, Column *col, const char *name) {
    col->held = 0;
    if (PyObject_GetBuffer(obj, &col->view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) return -1;
    col->held = 1;
    const char *f = col->view.format ? col->view.format : "B";
    if (*f == '<' || *f == '=' || *f == '@') f++;
    if (col->view.itemsize != 8 || (strcmp(f, "q") && strcmp(f, "l"))) {
        PyErr_Format(PyExc_TypeError, "%s: an array of 8-byte integers is needed", name);
        return -1;
    }
    col->at = (const i64 *)col->view.buf;
    col->size = col->view.len / 8;
    return 0;
}

static void release(Column *cols, int n) {
    for (int k = 0; k < n; k++)
        if (cols[k].held) PyBuffer_Release(&cols[k].view);
}

static PyObject *answer(int status, const i64 *chosen, Py_ssize_t n) {
    if (status == NO_MEMORY) return PyErr_NoMemory();
    PyObject *list = PyList_New(status == OPTIMAL ? n : 0);
    if (!list) return NULL;
    if (status == OPTIMAL) {
        for (Py_ssize_t k = 0; k < n; k++) {
            PyObject *x = PyLong_FromLongLong(chosen[k]);
            if (!x) {
                Py_DECREF(list);
                return NULL;
            }
            PyList_SET_ITEM(list, k, x);
        }
    }
    PyObject *out = Py_BuildValue("(iN)", status, list);
    return out;
}

static PyObject *py_solve_items(PyObject *self, PyObject *args) {
    PyObject *o[4];
    long long cap, limit;
    double deadline_at;
    if (!PyArg_ParseTuple(args, "OOOOLdL", &o[0], &o[1], &o[2], &o[3], &cap, &deadline_at, &limit))
        return NULL;
    Column cols[4];
    memset(cols, 0, sizeof cols);
    const char *names[4] = {"start", "cost", "value", "weight"};
    for (int k = 0; k < 4; k++) {
        if (column(o[k], &cols[k], names[k]) < 0) {
            release(cols, 4);
            return NULL;
        }
    }
    Py_ssize_t items = cols[0].size - 1, total = cols[1].size;
    if (items < 0 || cols[2].size != total || cols[3].size != total || cols[0].at[items] != total) {
        release(cols, 4);
        PyErr_SetString(PyExc_ValueError, "solve_items: the arrays do not agree");
        return NULL;
    }
    Option *opts = malloc(sizeof(Option) * (size_t)(total + 1));
    i64 *chosen = malloc(sizeof(i64) * (size_t)(items + 1));
    int status = NO_MEMORY;
    if (opts && chosen) {
        for (Py_ssize_t k = 0; k < total; k++) {
            opts[k].c = cols[1].at[k];
            opts[k].v = cols[2].at[k];
            opts[k].w = cols[3].at[k];
            opts[k].id = k;
        }
        Py_BEGIN_ALLOW_THREADS
        status = solve(items, cols[0].at, opts, cap, deadline_at, limit, chosen);
        Py_END_ALLOW_THREADS
    }
    release(cols, 4);
    PyObject *out = answer(status, chosen, items);
    free(opts);
    free(chosen);
    return out;
}

/* union-find with path halving */
static Py_ssize_t root(Py_ssize_t *parent, Py_ssize_t i) {
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

static PyObject *py_solve_coupled(PyObject *self, PyObject *args) {
    PyObject *o[7];
    Py_ssize_t identities;
    long long cap, limit, option_limit;
    double deadline_at;
    if (!PyArg_ParseTuple(args, "OOOOnOOOLdLL", &o[0], &o[1], &o[2], &o[3], &identities, &o[4],
                          &o[5], &o[6], &cap, &deadline_at, &limit, &option_limit))
        return NULL;
    Column cols[7];
    memset(cols, 0, sizeof cols);
    const char *names[7] = {"identity_of", "cost", "value", "weight", "required", "group_start",
                            "group_members"};
    for (int k = 0; k < 7; k++) {
        if (column(o[k], &cols[k], names[k]) < 0) {
            release(cols, 7);
            return NULL;
        }
    }
    Py_ssize_t n = cols[0].size, groups = cols[5].size - 1;
    int bad = cols[1].size != n || cols[2].size != n || cols[3].size != n || groups < 0 ||
              cols[5].at[groups] != cols[6].size;
    for (Py_ssize_t f = 0; !bad && f < n; f++) bad = cols[0].at[f] < 0 || cols[0].at[f] >= identities;
    for (Py_ssize_t k = 0; !bad && k < cols[4].size; k++) bad = cols[4].at[k] < 0 || cols[4].at[k] >= identities;
    for (Py_ssize_t k = 0; !bad && k < cols[6].size; k++) bad = cols[6].at[k] < 0 || cols[6].at[k] >= identities;
    if (bad) {
        release(cols, 7);
        PyErr_SetString(PyExc_ValueError, "solve_coupled: the arrays do not agree");
        return NULL;
    }
    const i64 *identity_of = cols[0].at, *cost = cols[1].at, *value = cols[2].at, *weight = cols[3].at;
    int status = NO_MEMORY;
    Py_ssize_t m = identities;
    Py_ssize_t *parent = malloc(sizeof(Py_ssize_t) * (size_t)(m + 1));
    Py_ssize_t *fstart = calloc((size_t)m + 2, sizeof(Py_ssize_t)); /* forms by identity */
    Py_ssize_t *forms = malloc(sizeof(Py_ssize_t) * (size_t)(n + 1));
    Py_ssize_t *cstart = calloc((size_t)m + 2, sizeof(Py_ssize_t)); /* identities by item */
    Py_ssize_t *members = malloc(sizeof(Py_ssize_t) * (size_t)(m + 1));
    Py_ssize_t *item_of = malloc(sizeof(Py_ssize_t) * (size_t)(m + 1));
    unsigned char *must = calloc((size_t)m + 1, 1);
    i64 *start = NULL, *chosen = NULL, *choice_forms = NULL;
    Option *opts = NULL;
    Py_ssize_t *digit = malloc(sizeof(Py_ssize_t) * (size_t)(m + 1));
    Py_ssize_t items = 0;
    if (!parent || !fstart || !forms || !cstart || !members || !item_of || !must || !digit) goto out;
    for (Py_ssize_t i = 0; i < m; i++) parent[i] = i;
    for (Py_ssize_t g = 0; g < groups; g++) {
        Py_ssize_t a = cols[5].at[g], b = cols[5].at[g + 1];
        for (Py_ssize_t k = a + 1; k < b; k++) {
            Py_ssize_t x = root(parent, cols[6].at[k]), y = root(parent, cols[6].at[a]);
            parent[x] = y;
        }
    }
    /* forms of each identity, in form order */
    for (Py_ssize_t f = 0; f < n; f++) fstart[identity_of[f] + 1]++;
    for (Py_ssize_t i = 0; i < m; i++) fstart[i + 1] += fstart[i];
    {
        Py_ssize_t *fill = malloc(sizeof(Py_ssize_t) * (size_t)(m + 1));
        if (!fill) goto out;
        memcpy(fill, fstart, sizeof(Py_ssize_t) * (size_t)m);
        for (Py_ssize_t f = 0; f < n; f++) forms[fill[identity_of[f]]++] = f;
        free(fill);
    }
    /* items in the order of their first identity; identities ascending */
    for (Py_ssize_t i = 0; i < m; i++) item_of[i] = -1;
    for (Py_ssize_t i = 0; i < m; i++) {
        Py_ssize_t r = root(parent, i);
        if (item_of[r] < 0) item_of[r] = items++;
        item_of[i] = item_of[r];
    }
    for (Py_ssize_t i = 0; i < m; i++) cstart[item_of[i] + 1]++;
    for (Py_ssize_t t = 0; t < items; t++) cstart[t + 1] += cstart[t];
    {
        Py_ssize_t *fill = malloc(sizeof(Py_ssize_t) * (size_t)(items + 1));
        if (!fill) goto out;
        memcpy(fill, cstart, sizeof(Py_ssize_t) * (size_t)items);
        for (Py_ssize_t i = 0; i < m; i++) members[fill[item_of[i]]++] = i;
        free(fill);
    }
    for (Py_ssize_t k = 0; k < cols[4].size; k++) must[item_of[cols[4].at[k]]] = 1;
    /* options: none (unless required), then every combination of one form of each
       identity, the last identity's form varying fastest */
    Py_ssize_t total = 0;
    for (Py_ssize_t t = 0; t < items; t++) {
        i64 combinations = 1;
        for (Py_ssize_t k = cstart[t]; k < cstart[t + 1]; k++) {
            combinations *= fstart[members[k] + 1] - fstart[members[k]];
            if (combinations > option_limit) {
                status = LIMIT;
                goto out;
            }
        }
        total += combinations + !must[t];
    }
    start = malloc(sizeof(i64) * (size_t)(items + 1));
    opts = malloc(sizeof(Option) * (size_t)(total + 1));
    chosen = malloc(sizeof(i64) * (size_t)(items + 1));
    choice_forms = malloc(sizeof(i64) * (size_t)(n + 1));
    if (!start || !opts || !chosen || !choice_forms) goto out;
    /* an option's id is its index; its forms are found again from the digits */
    Py_ssize_t at = 0;
    for (Py_ssize_t t = 0; t < items; t++) {
        start[t] = at;
        if (!must[t]) {
            opts[at].c = opts[at].v = opts[at].w = 0;
            opts[at].id = at;
            at++;
        }
        Py_ssize_t a = cstart[t], b = cstart[t + 1];
        for (Py_ssize_t k = a; k < b; k++) digit[k] = 0;
        for (;;) {
            i64 c = 0, v = 0, w = 0;
            for (Py_ssize_t k = a; k < b; k++) {
                Py_ssize_t f = forms[fstart[members[k]] + digit[k]];
                c += cost[f];
                v += value[f];
                w += weight[f];
            }
            opts[at].c = c;
            opts[at].v = v;
            opts[at].w = w;
            opts[at].id = at;
            at++;
            Py_ssize_t k = b - 1;
            while (k >= a) {
                if (++digit[k] < fstart[members[k] + 1] - fstart[members[k]]) break;
                digit[k] = 0;
                k--;
            }
            if (k < a) break;
        }
    }
    start[items] = at;
    Py_BEGIN_ALLOW_THREADS
    status = solve(items, start, opts, cap, deadline_at, limit, chosen);
    Py_END_ALLOW_THREADS
    if (status == OPTIMAL) {
        /* each chosen option back to its forms: decode its index within the item */
        Py_ssize_t nf = 0;
        for (Py_ssize_t t = 0; t < items; t++) {
            i64 index = chosen[t] - start[t] - !must[t];
            if (index < 0) continue; /* none */
            Py_ssize_t a = cstart[t], b = cstart[t + 1];
            for (Py_ssize_t k = b - 1; k >= a; k--) {
                Py_ssize_t span = fstart[members[k] + 1] - fstart[members[k]];
                choice_forms[nf++] = forms[fstart[members[k]] + index % span];
                index /= span;
            }
        }
        qsort(choice_forms, (size_t)nf, sizeof(i64), ascending);
        free(chosen);
        chosen = choice_forms;
        choice_forms = NULL;
        items = nf;
    }
out:
    release(cols, 7);
    PyObject *result = answer(status, chosen, items);
    free(parent);
    free(fstart);
    free(forms);
    free(cstart);
    free(members);
    free(item_of);
    free(must);
    free(digit);
    free(start);
    free(opts);
    free(chosen);
    free(choice_forms);
    return result;
}

static PyMethodDef methods[] = {
    {"solve_items", py_solve_items, METH_VARARGS,
     "solve_items(start, cost, value, weight, cap, deadline_at, state_limit) -> (status, chosen)"},
    {"solve_coupled", py_solve_coupled, METH_VARARGS,
     "solve_coupled(identity_of, cost, value, weight, identities, required, group_start, "
     "group_members, cap, deadline_at, state_limit, option_limit) -> (status, forms)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_mckp",
                                    "The multiple-choice knapsack kernel (mckp_twin.py in C).", -1,
                                    methods};

PyMODINIT_FUNC PyInit__mckp(void) { return PyModule_Create(&module); }
