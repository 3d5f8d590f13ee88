// The prelude: run in each fresh runtime before the program, so what it
// captures (Proxy, Reflect, JSON, the originals it wraps) is the engine's
// own, whatever the program later does to the globals. It returns the
// functions Go keeps.
(function (g, call, guard, emit, specs, isProxy, isBuffer) {
  'use strict';
  const defineProperty = Object.defineProperty;
  const freeze = Object.freeze;
  const create = Object.create;
  const getPrototypeOf = Object.getPrototypeOf;
  const setPrototypeOf = Object.setPrototypeOf;
  const getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
  const ownKeys = Reflect.ownKeys;
  const keys = Object.keys;
  const isArray = Array.isArray;
  const apply = Reflect.apply;
  const construct = Reflect.construct;
  const rget = Reflect.get;
  const ProxyC = Proxy;
  const ErrorC = Error;
  const TypeErrorC = TypeError;
  const EvalErrorC = EvalError;
  const StringC = String;
  const SetC = Set;
  const setHas = Set.prototype.has;
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const MathMax = Math.max;
  const MathMin = Math.min;

  const fixed = (o, k, v) => defineProperty(o, k, { value: v, writable: false, enumerable: false, configurable: false });
  const method = (o, k, v) => defineProperty(o, k, { value: v, writable: true, enumerable: false, configurable: true });

  // No eval, no Function constructor (of any kind of function): the
  // program is the only code that runs.
  fixed(g, 'eval', function refusedEval() { throw new EvalErrorC('code mode: eval is not available'); });
  const samples = [function () {}, async function () {}, function* () {}]; // goja has no async generators
  for (const f of samples) {
    const proto = getPrototypeOf(f);
    const refused = function Function() { throw new EvalErrorC('code mode: the Function constructor is not available'); };
    refused.prototype = proto;
    fixed(proto, 'constructor', refused);
    if (proto === Function.prototype) {
      fixed(g, 'Function', refused);
    }
  }

  // Memory guards: built-ins that make something large in one native step,
  // which Interrupt cannot stop and the heap watchdog sees too late. Each
  // asks guard(bytes, what) first; guard interrupts the run when the size
  // passes the memory budget. Each then hands the built-in the values it
  // checked (the string, the count, a length pinned or an array copied),
  // never the program's object again: a getter or valueOf that answers
  // small to the check and large to the built-in would otherwise pass a
  // 64 GB allocation through.
  const ObjectC = Object;
  const S = String.prototype;
  const repeat = S.repeat, padStart = S.padStart, padEnd = S.padEnd, split = S.split;
  const replace = S.replace, replaceAll = S.replaceAll;
  const num = (n) => { const x = +n; return x === x ? x : 0; };
  method(S, 'repeat', function repeat_(count) {
    const str = StringC(this), c = num(count);
    guard(str.length * MathMax(0, c) * 2, 'String.prototype.repeat');
    return apply(repeat, str, [c]);
  });
  method(S, 'padStart', function padStart_(n, fill) {
    const str = StringC(this), len = num(n);
    guard(len * 2, 'String.prototype.padStart');
    return apply(padStart, str, fill === undefined ? [len] : [len, StringC(fill)]);
  });
  method(S, 'padEnd', function padEnd_(n, fill) {
    const str = StringC(this), len = num(n);
    guard(len * 2, 'String.prototype.padEnd');
    return apply(padEnd, str, fill === undefined ? [len] : [len, StringC(fill)]);
  });
  method(S, 'split', function split_(sep, limit) {
    const str = StringC(this);
    if (sep === '') guard(str.length * 24, 'String.prototype.split');
    return apply(split, str, arguments);
  });
  const replacing = (orig, name) => function (pat, rep) {
    const str = StringC(this);
    if (typeof rep === 'string' && rep.length > 1) {
      const n = str.length;
      guard((n + (n + 1) * rep.length) * 2, name);
    }
    return apply(orig, str, arguments);
  };
  method(S, 'replace', replacing(replace, 'String.prototype.replace'));
  method(S, 'replaceAll', replacing(replaceAll, 'String.prototype.replaceAll'));

  // Arrays: a value takes 16 bytes in goja. A sparse array can claim a
  // length of 2**32-1 without using memory, and every built-in that walks
  // it then loops (and often allocates) that far natively: the length is
  // checked before each.
  const A = Array.prototype;
  const ArrayC = Array;
  const lengthOf = (o, name) => {
    let n = o == null ? 0 : num(o.length);
    n = n > 0 ? MathMin(n - (n % 1), 2 ** 53 - 1) : 0;
    if (n > 0) guard(n * 16, name);
    return n;
  };
  // A genuine array that is no Proxy: its length is a data property that
  // nothing can change between the check and the built-in's own read.
  const plain = (o) => isArray(o) && !isProxy(o);
  // o as a built-in should see it: with the length that was checked, its
  // elements read through JavaScript, where Interrupt works.
  const pinned = (o, n) => new ProxyC(ObjectC(o), {
    get(t, k, r) { return k === 'length' ? n : rget(t, k, r); },
  });
  // A genuine array of o's first n elements, copied by JavaScript.
  const copy = (o, n) => {
    const a = [];
    for (let i = 0; i < n; i++) {
      defineProperty(a, i, { value: o[i], writable: true, enumerable: true, configurable: true });
    }
    return a;
  };
  for (const name of ['copyWithin', 'every', 'fill', 'filter', 'find', 'findIndex', 'findLast',
    'findLastIndex', 'flat', 'flatMap', 'forEach', 'includes', 'indexOf', 'lastIndexOf', 'map',
    'reduce', 'reduceRight', 'reverse', 'slice', 'some', 'sort', 'splice', 'toLocaleString',
    'toReversed', 'toSorted', 'toSpliced', 'with', 'unshift', 'shift']) {
    const orig = A[name];
    if (typeof orig !== 'function') continue;
    const what = 'Array.prototype.' + name;
    method(A, name, {
      [name](...args) {
        const n = lengthOf(this, what);
        if (this == null || plain(this)) return apply(orig, this, args);
        const self = pinned(this, n);
        const res = apply(orig, self, args);
        return res === self ? this : res;
      },
    }[name]);
  }
  // concat spreads its arguments natively: when any is not a genuine array
  // or a primitive, it is done here instead.
  const origConcat = A.concat;
  const isConcatSpreadable = Symbol.isConcatSpreadable;
  const isObject = (x) => x !== null && (typeof x === 'object' || typeof x === 'function');
  const define = (o, k, v) => defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });
  method(A, 'concat', function concat(...args) {
    const items = [this];
    for (let i = 0; i < args.length; i++) define(items, i + 1, args[i]);
    let native = true;
    for (let i = 0; i < items.length; i++) {
      const x = items[i];
      if (plain(x)) lengthOf(x, 'Array.prototype.concat');
      else if (isObject(x)) native = false;
    }
    if (native) return apply(origConcat, this, args);
    const out = [];
    let k = 0;
    for (let i = 0; i < items.length; i++) {
      const x = i === 0 ? ObjectC(items[0]) : items[i];
      let spread = false;
      if (isObject(x)) {
        const s = x[isConcatSpreadable];
        spread = s !== undefined ? !!s : isArray(x);
      }
      if (!spread) {
        define(out, k++, x);
        continue;
      }
      const n = lengthOf(x, 'Array.prototype.concat');
      guard((k + n) * 16, 'Array.prototype.concat');
      for (let j = 0; j < n; j++, k++) {
        if (j in x) define(out, k, x[j]);
      }
    }
    out.length = k;
    return out;
  });
  // The array iterators: spread ([...a], f(...a)), for-of, new Set(a),
  // new Map(a), Promise.all(a) and the rest of the iterator protocol walk
  // an array natively when it has the engine's own iterator. (An iterator
  // reads the length at each step: a getter that answers otherwise later
  // runs JavaScript at each step, where Interrupt works.)
  const origValues = A.values;
  const guardedValues = function values() {
    lengthOf(this, 'an array iterator');
    return apply(origValues, this, []);
  };
  method(A, 'values', guardedValues);
  method(A, Symbol.iterator, guardedValues);
  // (From here on the prelude loops by index: for-of would now take the
  // slow path through the guarded iterator, at every run's cost.)
  for (let i1 = 0, a1 = ['keys', 'entries']; i1 < a1.length; i1++) { const name = a1[i1];
    const orig = A[name];
    method(A, name, { [name]() { lengthOf(this, 'an array iterator'); return apply(orig, this, []); } }[name]);
  }
  // Argument lists made from an array-like: apply, Reflect.apply and
  // Reflect.construct, String.raw. A list that is not a genuine array is
  // copied first.
  const argList = (args, what) => {
    if (args == null) return args;
    const n = lengthOf(args, what);
    return plain(args) ? args : copy(args, n);
  };
  const F = Function.prototype;
  const fapply = F.apply;
  method(F, 'apply', function apply_(self, args) {
    return apply(fapply, this, [self, argList(args, 'Function.prototype.apply')]);
  });
  method(Reflect, 'apply', function apply_(f, self, args) {
    return apply(f, self, argList(args, 'Reflect.apply'));
  });
  method(Reflect, 'construct', function construct_(C, args, nt) {
    const list = argList(args, 'Reflect.construct');
    return arguments.length > 2 ? construct(C, list, nt) : construct(C, list);
  });
  const raw = String.raw;
  method(String, 'raw', function raw_(strings, ...subs) {
    const r = strings == null ? strings : strings.raw;
    if (r == null) return apply(raw, this, [strings, ...subs]);
    const list = copy(r, lengthOf(r, 'String.raw'));
    return apply(raw, this, [{ raw: list }, ...subs]);
  });
  // A source for Array.from, TypedArray.from and a typed array's
  // constructor: an iterable is handed on as an iterable the program
  // cannot change, anything else as a copy of the length checked.
  const iteratorSym = Symbol.iterator;
  const source = (src, per, what) => {
    if (!isObject(src)) return src;
    if (plain(src)) {
      guard(lengthOf(src, what) * per, what);
      return src;
    }
    const it = src[iteratorSym];
    if (typeof it === 'function') {
      const iterable = {};
      defineProperty(iterable, iteratorSym, { value: function () { return apply(it, src, []); } });
      return iterable;
    }
    const n = lengthOf(src, what);
    guard(n * per, what);
    return copy(src, n);
  };
  // join is rewritten in JavaScript so nested arrays (and toString, which
  // calls join) are walked by interruptible code: [a, a] nested forty deep
  // would otherwise build 2**40 elements natively.
  // A cycle joins as '' where it recurs, as the native join does.
  const joining = new SetC();
  const setAdd = SetC.prototype.add, setDelete = SetC.prototype.delete;
  method(A, 'join', function join(sep) {
    lengthOf(this, 'Array.prototype.join');
    if (apply(setHas, joining, [this])) return '';
    apply(setAdd, joining, [this]);
    try {
      const s = sep === undefined ? ',' : StringC(sep);
      const n = this.length >>> 0;
      let out = '';
      for (let i = 0; i < n; i++) {
        if (i > 0) out += s;
        const v = this[i];
        if (v !== undefined && v !== null) out += StringC(v);
      }
      return out;
    } finally {
      apply(setDelete, joining, [this]);
    }
  });
  // A guarded constructor is a plain function standing in for the
  // original (goja's instanceof does not see through a Proxy): same
  // prototype object, same statics, so instanceof and subclassing work.
  const standIn = (C, f) => {
    f.prototype = C.prototype;
    setPrototypeOf(f, getPrototypeOf(C));
    for (let i2 = 0, a2 = ownKeys(C); i2 < a2.length; i2++) { const k = a2[i2];
      if (k !== 'prototype' && k !== 'length' && k !== 'name') defineProperty(f, k, getOwnPropertyDescriptor(C, k));
    }
    defineProperty(f, 'name', { value: C.name });
    fixed(C.prototype, 'constructor', f);
    return f;
  };
  const guardedArray = standIn(ArrayC, function Array(...args) {
    if (args.length === 1 && typeof args[0] === 'number') guard(args[0] * 16, new.target ? 'new Array' : 'Array');
    return construct(ArrayC, args, new.target || guardedArray);
  });
  const origFrom = ArrayC.from;
  method(guardedArray, 'from', function from_(src, ...rest) {
    return apply(origFrom, this, [source(src, 16, 'Array.from')].concat(rest));
  });
  method(g, 'Array', guardedArray);

  // Buffers are allocated whole when made.
  const buffers = ['ArrayBuffer', 'Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array',
    'Int32Array', 'Uint32Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array'];
  // %TypedArray%.from and .of, inherited by every typed array: from
  // allocates the whole result from an array-like's length.
  const TA = getPrototypeOf(Uint8Array);
  const taFrom = TA.from;
  method(TA, 'from', function from_(src, ...rest) {
    const per = (this && this.BYTES_PER_ELEMENT) || 8;
    return apply(taFrom, this, [source(src, per, 'TypedArray.from')].concat(rest));
  });
  for (let i3 = 0, a3 = buffers; i3 < a3.length; i3++) { const name = a3[i3];
    const C = g[name];
    if (typeof C !== 'function') continue;
    const per = C.BYTES_PER_ELEMENT || 1;
    const guarded = standIn(C, function (...args) {
      if (!new.target) throw new TypeErrorC('Constructor ' + name + ' requires \'new\'');
      const a = args[0];
      if (typeof a === 'number') guard(a * per, 'new ' + name);
      else if (name !== 'ArrayBuffer' && a != null && typeof a === 'object' && !isBuffer(a)) args[0] = source(a, per, 'new ' + name);
      return construct(C, args, new.target);
    });
    method(g, name, guarded);
  }

  // JSON.stringify walks shared references again each time they occur
  // ([a, a] nested forty deep is 2**40 values): a replacer makes the walk
  // call JavaScript at every value, where Interrupt stops it.
  const guardedStringify = function stringify_(value, replacer, space) {
    let rep;
    if (typeof replacer === 'function') {
      rep = replacer;
    } else if (isArray(replacer)) {
      const allowed = new SetC();
      for (let i = 0; i < replacer.length; i++) allowed.add(StringC(replacer[i]));
      rep = function (k, v) {
        if (k === '' || isArray(this) || apply(setHas, allowed, [k])) return v;
        return undefined;
      };
    } else {
      rep = function (k, v) { return v; };
    }
    return apply(stringify, JSON, [value, rep, space]);
  };
  method(JSON, 'stringify', guardedStringify);

  // The console writes through Go, which counts it against the output
  // budget.
  const format = (args) => {
    let line = '';
    for (let i = 0; i < args.length; i++) {
      const v = args[i];
      let s;
      if (typeof v === 'string') s = v;
      else if (v instanceof ErrorC) s = StringC(v.stack || v);
      else {
        try { s = guardedStringify(v); } catch (e) { s = undefined; }
        if (s === undefined) s = StringC(v);
      }
      line += (i > 0 ? ' ' : '') + s;
    }
    return line;
  };
  const console = {};
  for (let i4 = 0, a4 = ['log', 'info', 'warn', 'error', 'debug']; i4 < a4.length; i4++) { const level = a4[i4];
    method(console, level, function (...args) { emit(level, format(args)); });
  }
  method(g, 'console', console);

  // tools.<namespace>.<function>: each an async function that calls Go.
  // A name the caller was not given throws at once, naming what there is.
  const strictObject = (path, names) => create(new ProxyC({}, {
    get(t, p, r) {
      if (typeof p === 'symbol' || p in t) return rget(t, p, r);
      if (p === 'then' || p === 'toJSON') return undefined;
      throw new TypeErrorC('code mode: there is no tool ' + path + StringC(p) + '; ' + path.slice(0, -1) +
        ' has: ' + (names.length ? names.join(', ') : 'nothing'));
    },
  }));
  const byNS = {};
  for (let i = 0; i < specs.length; i++) {
    const s = specs[i];
    (byNS[s.ns] || (byNS[s.ns] = [])).push({ fn: s.fn, i: i });
  }
  const tools = strictObject('tools.', keys(byNS));
  for (let i5 = 0, a5 = keys(byNS); i5 < a5.length; i5++) { const ns = a5[i5];
    const list = byNS[ns];
    const o = strictObject('tools.' + ns + '.', list.map((x) => x.fn));
    for (let i6 = 0, a6 = list; i6 < a6.length; i6++) { const x = a6[i6];
      const i = x.i;
      const f = { async [x.fn](args) { return call(i, args); } }[x.fn];
      fixed(o, x.fn, f);
    }
    freeze(o);
    fixed(tools, ns, o);
  }
  freeze(tools);
  fixed(g, 'tools', tools);

  return { stringify: guardedStringify, parse: parse };
})
