/* The gates' first pass in C: gates_twin.py, step for step, reading each candidate's
 * slots at their offsets (no Python call per candidate).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

enum { ID, IDENTITY, REQUIRED, LINEAGE, SOURCE, VERSION, ROLE, CONTENT, SCOPE, DEPENDS_ON, GROUP,
       TOOL_CALL_ID, READ };
static const char *names[READ] = {"id", "identity", "required", "lineage", "source", "version",
                                  "role", "content", "scope", "depends_on", "group",
                                  "tool_call_id"};

static PyTypeObject *read_type;
static Py_ssize_t offset[READ];

static int offsets(PyTypeObject *type) {
    if (type == read_type) return 0;
    for (int k = 0; k < READ; k++) {
        PyObject *descr = PyObject_GetAttrString((PyObject *)type, names[k]);
        if (!descr) return -1;
        int ok = Py_IS_TYPE(descr, &PyMemberDescr_Type) &&
                 ((PyMemberDescrObject *)descr)->d_member->type == T_OBJECT_EX;
        if (ok) offset[k] = ((PyMemberDescrObject *)descr)->d_member->offset;
        Py_DECREF(descr);
        if (!ok) {
            PyErr_Format(PyExc_TypeError, "first_pass: %s is not an object slot", names[k]);
            return -1;
        }
    }
    read_type = type;
    return 0;
}

#define SLOT(obj, k) (*(PyObject **)((char *)(obj) + offset[k]))

/* whether a candidate is sealed (its id, identity or a lineage entry in the seal) */
static int sealed(PyObject *seal, PyObject *c) {
    int in = PySet_Contains(seal, SLOT(c, ID));
    if (in) return in;
    in = PySet_Contains(seal, SLOT(c, IDENTITY));
    if (in) return in;
    PyObject *lineage = SLOT(c, LINEAGE);
    PyObject *fast = PySequence_Fast(lineage, "lineage must be a sequence");
    if (!fast) return -1;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast); i++) {
        in = PySet_Contains(seal, PySequence_Fast_GET_ITEM(fast, i));
        if (in) break;
    }
    Py_DECREF(fast);
    return in;
}

/* whether the freshness gate fails: a source with no version, or not the current one */
static int stale(PyObject *sources, PyObject *c) {
    PyObject *source = SLOT(c, SOURCE), *version = SLOT(c, VERSION);
    if (source == Py_None) return 0;
    if (version == Py_None) return 1;
    PyObject *current = PyDict_GetItemWithError(sources, source);
    if (!current) return PyErr_Occurred() ? -1 : 1;
    int same = PyObject_RichCompareBool(current, version, Py_EQ);
    return same < 0 ? -1 : !same;
}

static PyObject *first_pass(PyObject *self, PyObject *args) {
    PyObject *candidates, *seal, *sources, *scope, *instruction;
    int checks_source, require_content;
    if (!PyArg_ParseTuple(args, "OO!O!OppO", &candidates, &PyFrozenSet_Type, &seal, &PyDict_Type,
                          &sources, &scope, &checks_source, &require_content, &instruction))
        return NULL;
    PyObject *fast = PySequence_Fast(candidates, "the candidates must be a sequence");
    if (!fast) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    PyObject *ids = PyList_New(n), *identities = PyList_New(n), *flagged = PyList_New(0),
             *picked = PyList_New(0), *shared = PyList_New(0), *linked = PyList_New(0);
    PyObject *shared_word = PyUnicode_InternFromString("shared");
    if (!ids || !identities || !flagged || !picked || !shared || !linked || !shared_word) goto fail;
    int any_seal = PySet_GET_SIZE(seal) > 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *c = PySequence_Fast_GET_ITEM(fast, i);
        if (offsets(Py_TYPE(c)) < 0) goto fail;
        PyObject *cid = SLOT(c, ID), *identity = SLOT(c, IDENTITY);
        if (!cid || !identity) {
            PyErr_SetString(PyExc_AttributeError, "first_pass: a candidate without its id");
            goto fail;
        }
        Py_INCREF(cid);
        PyList_SET_ITEM(ids, i, cid);
        Py_INCREF(identity);
        PyList_SET_ITEM(identities, i, identity);
        int required = PyObject_IsTrue(SLOT(c, REQUIRED));
        if (required < 0 || (required && PyList_Append(flagged, identity) < 0)) goto fail;
        int pick = any_seal ? sealed(seal, c) : 0;
        if (!pick && checks_source) pick = stale(sources, c);
        if (!pick) pick = SLOT(c, ROLE) == instruction;
        if (!pick) pick = require_content && SLOT(c, CONTENT) == Py_None;
        if (pick < 0) goto fail;
        if (pick) {
            if (PyList_Append(picked, c) < 0) goto fail;
        } else if (scope != Py_None) {
            int away = PyObject_RichCompareBool(SLOT(c, SCOPE), scope, Py_NE);
            if (away < 0) goto fail;
            if (away) {
                int is_shared = PyObject_RichCompareBool(SLOT(c, SCOPE), shared_word, Py_EQ);
                if (is_shared < 0) goto fail;
                if (PyList_Append(is_shared ? shared : picked, is_shared ? cid : c) < 0) goto fail;
            }
        }
        int link = PyObject_IsTrue(SLOT(c, DEPENDS_ON));
        if (link < 0) goto fail;
        if (link || SLOT(c, GROUP) != Py_None || SLOT(c, TOOL_CALL_ID) != Py_None) {
            if (PyList_Append(linked, c) < 0) goto fail;
        }
    }
    Py_DECREF(fast);
    Py_DECREF(shared_word);
    return Py_BuildValue("(NNNNNN)", ids, identities, flagged, picked, shared, linked);
fail:
    Py_DECREF(fast);
    Py_XDECREF(ids);
    Py_XDECREF(identities);
    Py_XDECREF(flagged);
    Py_XDECREF(picked);
    Py_XDECREF(shared);
    Py_XDECREF(linked);
    Py_XDECREF(shared_word);
    return NULL;
}

static PyMethodDef methods[] = {
    {"first_pass", first_pass, METH_VARARGS,
     "first_pass(candidates, seal, sources, scope, checks_source, require_content, "
     "instruction) -> (ids, identities, flagged, picked, shared, linked)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_gates",
                                    "The gates' first pass (gates_twin.py in C).", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__gates(void) { return PyModule_Create(&module); }
