// The prelude: run in each fresh runtime before the program, so what it
// captures (Proxy, Reflect, JSON, the originals it wraps) is the engine's
// own, whatever the program later does to the globals. It returns the
// functions Go keeps.
(function (g, call, guard, emit, specs) {
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
  // passes the memory budget.
  const S = String.prototype;
  const repeat = S.repeat, padStart = S.padStart, padEnd = S.padEnd, split = S.split;
  const replace = S.replace, replaceAll = S.replaceAll;
  method(S, 'repeat', function repeat_(n) {
    guard(StringC(this).length * MathMax(0, +n || 0) * 2, 'String.prototype.repeat');
    return apply(repeat, this, arguments);
  });
  method(S, 'padStart', function padStart_(n) {
    guard((+n || 0) * 2, 'String.prototype.padStart');
    return apply(padStart, this, arguments);
  });
  method(S, 'padEnd', function padEnd_(n) {
    guard((+n || 0) * 2, 'String.prototype.padEnd');
    return apply(padEnd, this, arguments);
  });
  method(S, 'split', function split_(sep) {
    if (sep === '') guard(StringC(this).length * 24, 'String.prototype.split');
    return apply(split, this, arguments);
  });
  const replacing = (orig, name) => function (pat, rep) {
    if (typeof rep === 'string' && rep.length > 1) {
      const n = StringC(this).length;
      guard((n + (n + 1) * rep.length) * 2, name);
    }
    return apply(orig, this, arguments);
  };
  method(S, 'replace', replacing(replace, 'String.prototype.replace'));
  method(S, 'replaceAll', replacing(replaceAll, 'String.prototype.replaceAll'));

  // Arrays: a value takes 16 bytes in goja. A sparse array can claim a
  // length of 2**32-1 without using memory, and every built-in that walks
  // it then loops (and often allocates) that far natively: the length is
  // checked before each.
  const A = Array.prototype;
  const ArrayC = Array;
  const guardLength = (o, name) => {
    const n = o == null ? 0 : +o.length;
    if (n > 0) guard(n * 16, name);
  };
  for (const name of ['copyWithin', 'every', 'fill', 'filter', 'find', 'findIndex', 'findLast',
    'findLastIndex', 'flat', 'flatMap', 'forEach', 'includes', 'indexOf', 'lastIndexOf', 'map',
    'reduce', 'reduceRight', 'reverse', 'slice', 'some', 'sort', 'splice', 'toLocaleString',
    'toReversed', 'toSorted', 'toSpliced', 'with', 'unshift']) {
    const orig = A[name];
    if (typeof orig !== 'function') continue;
    const what = 'Array.prototype.' + name;
    method(A, name, {
      [name](...args) {
        guardLength(this, what);
        return apply(orig, this, args);
      },
    }[name]);
  }
  // concat walks its arguments' lengths too.
  const origConcat = A.concat;
  method(A, 'concat', function concat(...args) {
    guardLength(this, 'Array.prototype.concat');
    for (let i = 0; i < args.length; i++) {
      if (isArray(args[i])) guardLength(args[i], 'Array.prototype.concat');
    }
    return apply(origConcat, this, args);
  });
  // The array iterators: spread ([...a], f(...a)), for-of, new Set(a),
  // new Map(a), Promise.all(a) and the rest of the iterator protocol walk
  // an array natively when it has the engine's own iterator.
  const origValues = A.values;
  const guardedValues = function values() {
    guardLength(this, 'an array iterator');
    return apply(origValues, this, []);
  };
  method(A, 'values', guardedValues);
  method(A, Symbol.iterator, guardedValues);
  for (const name of ['keys', 'entries']) {
    const orig = A[name];
    method(A, name, { [name]() { guardLength(this, 'an array iterator'); return apply(orig, this, []); } }[name]);
  }
  // Argument lists made from an array-like: apply, Reflect.apply and
  // Reflect.construct, String.raw.
  const F = Function.prototype;
  const fapply = F.apply;
  method(F, 'apply', function apply_(self, args) {
    guardLength(args, 'Function.prototype.apply');
    return apply(fapply, this, [self, args]);
  });
  method(Reflect, 'apply', function apply_(f, self, args) {
    guardLength(args, 'Reflect.apply');
    return apply(f, self, args);
  });
  method(Reflect, 'construct', function construct_(C, args, nt) {
    guardLength(args, 'Reflect.construct');
    return arguments.length > 2 ? construct(C, args, nt) : construct(C, args);
  });
  const raw = String.raw;
  method(String, 'raw', function raw_(strings) {
    if (strings != null) guardLength(strings.raw, 'String.raw');
    return apply(raw, this, arguments);
  });
  // join is rewritten in JavaScript so nested arrays (and toString, which
  // calls join) are walked by interruptible code: [a, a] nested forty deep
  // would otherwise build 2**40 elements natively.
  // A cycle joins as '' where it recurs, as the native join does.
  const joining = new SetC();
  const setAdd = SetC.prototype.add, setDelete = SetC.prototype.delete;
  method(A, 'join', function join(sep) {
    guardLength(this, 'Array.prototype.join');
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
    for (const k of ownKeys(C)) {
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
  method(guardedArray, 'from', function from(src) {
    if (src != null && typeof src.length === 'number') guard(src.length * 16, 'Array.from');
    return apply(origFrom, this, arguments);
  });
  method(g, 'Array', guardedArray);

  // Buffers are allocated whole when made.
  const buffers = ['ArrayBuffer', 'Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array',
    'Int32Array', 'Uint32Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array'];
  // %TypedArray%.from and .of, inherited by every typed array: from
  // allocates the whole result from an array-like's length.
  const TA = getPrototypeOf(Uint8Array);
  const taFrom = TA.from;
  method(TA, 'from', function from_(src) {
    const per = (this && this.BYTES_PER_ELEMENT) || 8;
    if (src != null && typeof src.length === 'number') guard(src.length * per, 'TypedArray.from');
    return apply(taFrom, this, arguments);
  });
  for (const name of buffers) {
    const C = g[name];
    if (typeof C !== 'function') continue;
    const per = C.BYTES_PER_ELEMENT || 1;
    const guarded = standIn(C, function (...args) {
      if (!new.target) throw new TypeErrorC('Constructor ' + name + ' requires \'new\'');
      const a = args[0];
      if (typeof a === 'number') guard(a * per, 'new ' + name);
      else if (a != null && typeof a === 'object' && typeof a.length === 'number') guard(a.length * per, 'new ' + name);
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
      for (const k of replacer) allowed.add(StringC(k));
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
  for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
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
  for (const ns of keys(byNS)) {
    const list = byNS[ns];
    const o = strictObject('tools.' + ns + '.', list.map((x) => x.fn));
    for (const x of list) {
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
