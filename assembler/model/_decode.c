/* The candidates of decoded Structs in C: decode_twin.py, step for step.
 *
 * Input and output as the twin's decoded(): the Structs' fields are read at their
 * slots' offsets and each Candidate's slots are filled at theirs, so a candidate costs
 * no Python call; each check is the twin's, and None is returned where it returns None.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

enum { FIELDS = 21, SLOTS = 22 };
enum {
    F_ID, F_IDENTITY, F_COST, F_FORM, F_RELEVANCE, F_REQUIRED, F_SCOPE, F_TRANSFER, F_SOURCE,
    F_VERSION, F_CHANNEL, F_ROLE, F_DEPENDS_ON, F_GROUP, F_LINEAGE, F_CONTENT, F_LABELS,
    F_KIND, F_TOOL_CALL_ID, F_TOOL_NAME, F_TURN
};

/* the offsets of a type's object slots named by the sequence `names` */
static int offsets_of(PyObject *type, PyObject *names, Py_ssize_t count, Py_ssize_t *out) {
    PyObject *fast = PySequence_Fast(names, "the field names must be a sequence");
    if (!fast) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != count) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_TypeError, "decoded: %zd fields expected", count);
        return -1;
    }
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *descr = PyObject_GetAttr(type, PySequence_Fast_GET_ITEM(fast, k));
        if (!descr) {
            Py_DECREF(fast);
            return -1;
        }
        int ok = Py_IS_TYPE(descr, &PyMemberDescr_Type) &&
                 (((PyMemberDescrObject *)descr)->d_member->type == T_OBJECT_EX ||
                  ((PyMemberDescrObject *)descr)->d_member->type == T_OBJECT);
        if (ok) out[k] = ((PyMemberDescrObject *)descr)->d_member->offset;
        Py_DECREF(descr);
        if (!ok) {
            Py_DECREF(fast);
            PyErr_SetString(PyExc_TypeError, "decoded: a field is not an object slot");
            return -1;
        }
    }
    Py_DECREF(fast);
    return 0;
}

/* a plain str of Unicode scalar values (no surrogate code point) */
static int text(PyObject *value) {
    if (!PyUnicode_CheckExact(value)) return 0;
    if (PyUnicode_READY(value) < 0) return -1;
    int kind = PyUnicode_KIND(value);
    if (kind == PyUnicode_1BYTE_KIND) return 1;
    Py_ssize_t n = PyUnicode_GET_LENGTH(value);
    if (kind == PyUnicode_2BYTE_KIND) {
        const Py_UCS2 *at = PyUnicode_2BYTE_DATA(value);
        for (Py_ssize_t i = 0; i < n; i++)
            if (at[i] >= 0xD800 && at[i] <= 0xDFFF) return 0;
        return 1;
    }
    const Py_UCS4 *at = PyUnicode_4BYTE_DATA(value);
    for (Py_ssize_t i = 0; i < n; i++)
        if (at[i] >= 0xD800 && at[i] <= 0xDFFF) return 0;
    return 1;
}

static int optional_text(PyObject *value) { return value == Py_None ? 1 : text(value); }

/* every item of a list is text */
static int texts(PyObject *list) {
    if (!PyList_Check(list)) return 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++) {
        int ok = text(PyList_GET_ITEM(list, i));
        if (ok <= 0) return ok;
    }
    return 1;
}

static PyObject *empty_tuple;

/* a list as a tuple (sorted and without repeats when `as_set`); () when empty */
static PyObject *tupled(PyObject *list, int as_set) {
    if (PyList_GET_SIZE(list) == 0) {
        Py_INCREF(empty_tuple);
        return empty_tuple;
    }
    if (!as_set) return PyList_AsTuple(list);
    PyObject *set = PySet_New(list);
    if (!set) return NULL;
    PyObject *sorted = PySequence_List(set);
    Py_DECREF(set);
    if (!sorted) return NULL;
    if (PyList_Sort(sorted) < 0) {
        Py_DECREF(sorted);
        return NULL;
    }
    PyObject *out = PyList_AsTuple(sorted);
    Py_DECREF(sorted);
    return out;
}

static PyObject *decoded(PyObject *self, PyObject *args) {
    PyObject *forms, *cls, *kind_role, *tool_kinds, *call, *unset;
    if (!PyArg_ParseTuple(args, "O!O!O!OOO", &PyList_Type, &forms, &PyType_Type, &cls,
                          &PyDict_Type, &kind_role, &tool_kinds, &call, &unset))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(forms);
    PyObject *out = PyList_New(0);
    if (!out || n == 0) return out;
    Py_ssize_t field[FIELDS], slot[SLOTS];
    PyObject *form_type = (PyObject *)Py_TYPE(PyList_GET_ITEM(forms, 0));
    PyObject *names = PyObject_GetAttrString(form_type, "__struct_fields__");
    if (!names || offsets_of(form_type, names, FIELDS, field) < 0) goto fail_names;
    Py_DECREF(names);
    names = PyObject_GetAttrString(cls, "__slots__");
    if (!names || offsets_of(cls, names, SLOTS, slot) < 0) goto fail_names;
    Py_DECREF(names);
    PyTypeObject *type = (PyTypeObject *)cls;
    for (Py_ssize_t index = 0; index < n; index++) {
        PyObject *f = PyList_GET_ITEM(forms, index);
        if ((PyObject *)Py_TYPE(f) != form_type) goto invalid;
        PyObject *v[FIELDS];
        for (int k = 0; k < FIELDS; k++) {
            v[k] = *(PyObject **)((char *)f + field[k]);
            if (!v[k]) goto invalid;
        }
        PyObject *identity = v[F_IDENTITY] == unset ? v[F_ID] : v[F_IDENTITY];
        PyObject *key = PyTuple_Pack(2, v[F_KIND], v[F_ROLE]);
        if (!key) goto fail;
        PyObject *resolved = PyDict_GetItemWithError(kind_role, key);
        Py_DECREF(key);
        if (!resolved) {
            if (PyErr_Occurred()) goto fail;
            goto invalid;
        }
        PyObject *kind = PyTuple_GET_ITEM(resolved, 0), *role = PyTuple_GET_ITEM(resolved, 1);
        int tool = PySequence_Contains(tool_kinds, kind);
        if (tool < 0) goto fail;
        if ((v[F_TOOL_CALL_ID] == Py_None) == tool || (v[F_TOOL_NAME] == Py_None) == (kind == call))
            goto invalid;
        if (!PyLong_CheckExact(v[F_COST]) || !PyFloat_CheckExact(v[F_RELEVANCE]) ||
            !PyLong_CheckExact(v[F_TURN]))
            goto invalid;
        int ok = text(v[F_ID]);
        if (ok > 0) ok = text(identity);
        if (ok > 0) ok = text(v[F_FORM]);
        if (ok > 0) ok = text(v[F_SCOPE]);
        static const int optional[] = {F_SOURCE, F_VERSION, F_CHANNEL, F_GROUP, F_CONTENT,
                                       F_TOOL_CALL_ID, F_TOOL_NAME};
        for (int k = 0; ok > 0 && k < 7; k++) ok = optional_text(v[optional[k]]);
        if (ok < 0) goto fail;
        if (!ok) goto invalid;
        PyObject *transfer = Py_None;
        if (v[F_TRANSFER] != Py_None) {
            transfer = PyObject_GetAttrString(v[F_TRANSFER], "from_");
            if (!transfer) goto fail;
            ok = text(transfer);
            Py_DECREF(transfer); /* the Struct holds it */
            if (ok < 0) goto fail;
            if (!ok) goto invalid;
        }
        static const int lists[] = {F_DEPENDS_ON, F_LINEAGE, F_LABELS};
        PyObject *made[3];
        for (int k = 0; k < 3; k++) {
            PyObject *list = v[lists[k]];
            if (PyTuple_CheckExact(list) && PyTuple_GET_SIZE(list) == 0) {
                /* the default */
                Py_INCREF(empty_tuple);
                made[k] = empty_tuple;
                continue;
            }
            ok = texts(list);
            if (ok <= 0) {
                for (int j = 0; j < k; j++) Py_DECREF(made[j]);
                if (ok < 0) goto fail;
                goto invalid;
            }
            made[k] = tupled(list, k == 0);
            if (!made[k]) {
                for (int j = 0; j < k; j++) Py_DECREF(made[j]);
                goto fail;
            }
        }
        PyObject *position = PyLong_FromSsize_t(index);
        if (!position) {
            for (int j = 0; j < 3; j++) Py_DECREF(made[j]);
            goto fail;
        }
        PyObject *obj = type->tp_alloc(type, 0);
        if (!obj) {
            for (int j = 0; j < 3; j++) Py_DECREF(made[j]);
            Py_DECREF(position);
            goto fail;
        }
        /* Candidate's slots, in order; the references made here are handed over */
        PyObject *values[SLOTS] = {
            v[F_ID], identity, v[F_COST], v[F_FORM], v[F_RELEVANCE], v[F_REQUIRED], v[F_SCOPE],
            transfer, v[F_SOURCE], v[F_VERSION], v[F_CHANNEL], role, made[0], v[F_GROUP],
            made[1], v[F_CONTENT], made[2], kind, v[F_TOOL_CALL_ID], v[F_TOOL_NAME], v[F_TURN],
            position};
        for (int k = 0; k < SLOTS; k++) {
            /* the made tuples (depends_on, lineage, labels) and the position are owned */
            if (k != 12 && k != 14 && k != 16 && k != 21) Py_INCREF(values[k]);
            *(PyObject **)((char *)obj + slot[k]) = values[k];
        }
        /* A candidate holds strings, numbers, enum members and tuples of strings: it is
           in no reference cycle, so the cyclic collector need not walk it (as msgspec's
           gc=False Structs); 100k of them walked by each full collection cost more
           than their making. */
        if (PyObject_IS_GC(obj) && PyObject_GC_IsTracked(obj)) PyObject_GC_UnTrack(obj);
        if (PyList_Append(out, obj) < 0) {
            Py_DECREF(obj);
            goto fail;
        }
        Py_DECREF(obj);
    }
    return out;
invalid:
    Py_DECREF(out);
    Py_RETURN_NONE;
fail_names:
    Py_XDECREF(names);
fail:
    Py_DECREF(out);
    return NULL;
}

/* the object slots of the last type copied, and their offsets */
static PyTypeObject *copied_type;
static Py_ssize_t copied_count, copied_offsets[64];

static PyObject *replaced(PyObject *self, PyObject *args) {
    PyObject *obj, *value;
    Py_ssize_t index;
    if (!PyArg_ParseTuple(args, "OnO", &obj, &index, &value)) return NULL;
    PyTypeObject *type = Py_TYPE(obj);
    if (type != copied_type) {
        PyObject *names = PyObject_GetAttrString((PyObject *)type, "__slots__");
        if (!names) return NULL;
        Py_ssize_t count = PyObject_Length(names);
        if (count < 0 || count > 64) {
            Py_DECREF(names);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "replaced: too many slots");
            return NULL;
        }
        int failed = offsets_of((PyObject *)type, names, count, copied_offsets);
        Py_DECREF(names);
        if (failed) {
            copied_type = NULL;
            return NULL;
        }
        copied_type = type;
        copied_count = count;
    }
    if (index < 0 || index >= copied_count) {
        PyErr_SetString(PyExc_IndexError, "replaced: no slot at that index");
        return NULL;
    }
    PyObject *copy = type->tp_alloc(type, 0);
    if (!copy) return NULL;
    for (Py_ssize_t k = 0; k < copied_count; k++) {
        PyObject *held = k == index ? value : *(PyObject **)((char *)obj + copied_offsets[k]);
        if (!held) {
            Py_DECREF(copy);
            PyErr_SetString(PyExc_AttributeError, "replaced: a slot is empty");
            return NULL;
        }
        Py_INCREF(held);
        *(PyObject **)((char *)copy + copied_offsets[k]) = held;
    }
    return copy;
}

static PyMethodDef methods[] = {
    {"replaced", replaced, METH_VARARGS,
     "replaced(obj, index, value) -> a copy of obj with value in its slot at index"},
    {"decoded", decoded, METH_VARARGS,
     "decoded(forms, candidate, kind_role, tool_kinds, call, unset) -> candidates or None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_decode",
                                    "The candidates of decoded Structs (decode_twin.py in C).",
                                    -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__decode(void) {
    empty_tuple = PyTuple_New(0);
    if (!empty_tuple) return NULL;
    return PyModule_Create(&module);
}
