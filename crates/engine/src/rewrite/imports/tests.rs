//! Imports across the languages the issue names: already there, merged, new after
//! each kind of header, and removed when unused.

use super::*;

fn add(lang: Lang, src: &str, stmt: &str) -> String {
    add_import(lang, src, stmt)
        .expect("import adds")
        .unwrap_or_else(|| src.to_string())
}

fn remove(lang: Lang, src: &str, name: &str) -> String {
    remove_unused(lang, src, name)
        .expect("parses")
        .unwrap_or_else(|| src.to_string())
}

const TS: Lang = Lang::TypeScript;
const PY: Lang = Lang::Python;
const RS: Lang = Lang::Rust;
const GO: Lang = Lang::Go;

#[test]
fn typescript_already_imported_merged_or_new() {
    let stmt = "import { logger } from \"./log\"";
    let have = "import { logger } from './log';\nlogger.warn(1);\n";
    assert_eq!(add(TS, have, stmt), have);
    // An alias is another binding; a namespace import does not bind the name.
    let merged = add(TS, "import { other } from \"./log\";\nx();\n", stmt);
    assert_eq!(merged, "import { other, logger } from \"./log\";\nx();\n");
    let with_default = add(TS, "import log from \"./log\";\n", stmt);
    assert_eq!(with_default, "import log, { logger } from \"./log\";\n");
    let default = add(TS, "import { a } from \"m\";\n", "import D from 'm'");
    assert_eq!(default, "import D, { a } from \"m\";\n");
    // A new statement after the last of the first run, in its quotes and semicolons.
    let src = "import a from 'a'\nimport { b } from 'b'\n\nb(a)\n";
    assert_eq!(
        add(TS, src, stmt),
        "import a from 'a'\nimport { b } from 'b'\nimport { logger } from './log'\n\nb(a)\n"
    );
    // `import type` does not provide a value: it is made a value import (the name
    // imported twice is TypeScript's duplicate identifier).
    let src = "import type { logger } from \"./log\";\n";
    assert_eq!(add(TS, src, stmt), "import { logger } from \"./log\";\n");
    assert_eq!(add(TS, have, "import type { logger } from './log'"), have);
}

#[test]
fn typescript_headers() {
    let stmt = "import { logger } from './log';";
    assert_eq!(
        add(TS, "#!/usr/bin/env node\nrun();\n", stmt),
        "#!/usr/bin/env node\n\nimport { logger } from './log';\n\nrun();\n"
    );
    assert_eq!(
        add(TS, "// Copyright 2024\n// MIT\n\nrun();\n", stmt),
        "// Copyright 2024\n// MIT\n\nimport { logger } from './log';\n\nrun();\n"
    );
    assert_eq!(
        add(Lang::JavaScript, "'use strict';\nrun();\n", stmt),
        "'use strict';\n\nimport { logger } from './log';\n\nrun();\n"
    );
    // A doc comment stays on the function it documents.
    assert_eq!(
        add(TS, "/** Runs. */\nfunction run() {}\n", stmt),
        "import { logger } from './log';\n\n/** Runs. */\nfunction run() {}\n"
    );
}

#[test]
fn python_imports() {
    let src = "from m import a\n\nprint(a)\n";
    assert_eq!(add(PY, src, "from m import a"), src);
    assert_eq!(
        add(PY, "from m import *\n", "from m import b"),
        "from m import *\n"
    );
    assert_eq!(
        add(PY, src, "from m import b"),
        "from m import a, b\n\nprint(a)\n"
    );
    assert_eq!(
        add(PY, "from m import (\n    a,\n)\n", "from m import b"),
        "from m import (\n    a,\n    b,\n)\n"
    );
    assert_eq!(add(PY, "import os\n", "import os"), "import os\n");
    assert_eq!(
        add(PY, "import os\n", "import sys"),
        "import os\nimport sys\n"
    );
    // After a docstring and `from __future__`, a group of its own.
    let src = "\"\"\"Doc.\"\"\"\nfrom __future__ import annotations\n\nx = 1\n";
    assert_eq!(
        add(PY, src, "import logging"),
        "\"\"\"Doc.\"\"\"\nfrom __future__ import annotations\n\nimport logging\n\nx = 1\n"
    );
    assert_eq!(
        add(PY, "\"\"\"Doc.\"\"\"\nx = 1\n", "import logging"),
        "\"\"\"Doc.\"\"\"\n\nimport logging\n\nx = 1\n"
    );
    assert_eq!(
        add(
            PY,
            "#!/usr/bin/env python\n# License\n\nx = 1\n",
            "import logging"
        ),
        "#!/usr/bin/env python\n# License\n\nimport logging\n\nx = 1\n"
    );
}

#[test]
fn rust_uses() {
    let src = "use std::fmt;\n\nfn f() {}\n";
    assert_eq!(add(RS, src, "use std::fmt;"), src);
    assert_eq!(add(RS, "use m::*;\n", "use m::C;"), "use m::*;\n");
    assert_eq!(
        add(RS, "use a::b::{C, D};\n", "use a::b::E;"),
        "use a::b::{C, D, E};\n"
    );
    assert_eq!(
        add(RS, "use a::b::C;\n", "use a::b::E"),
        "use a::b::{C, E};\n"
    );
    assert_eq!(
        add(RS, "use std::{fs, io::Read};\n", "use std::io::Read;"),
        "use std::{fs, io::Read};\n"
    );
    assert_eq!(
        add(
            RS,
            "//! Crate docs.\n#![allow(x)]\n\nfn f() {}\n",
            "use a::B;"
        ),
        "//! Crate docs.\n#![allow(x)]\n\nuse a::B;\n\nfn f() {}\n"
    );
}

#[test]
fn go_imports() {
    let src = "package p\n\nimport \"fmt\"\n\nfunc f() { fmt.Println() }\n";
    assert_eq!(add(GO, src, "import \"fmt\""), src);
    assert_eq!(
        add(GO, src, "import \"log\""),
        "package p\n\nimport (\n\t\"fmt\"\n\t\"log\"\n)\n\nfunc f() { fmt.Println() }\n"
    );
    let block = "package p\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n";
    assert_eq!(
        add(GO, block, "\"log\""),
        "package p\n\nimport (\n\t\"fmt\"\n\t\"log\"\n\t\"os\"\n)\n"
    );
    assert_eq!(
        add(GO, block, "import l \"github.com/x/log\""),
        "package p\n\nimport (\n\t\"fmt\"\n\tl \"github.com/x/log\"\n\t\"os\"\n)\n"
    );
    assert_eq!(
        add(GO, "package p\n\nfunc f() {}\n", "import \"log\""),
        "package p\n\nimport \"log\"\n\nfunc f() {}\n"
    );
}

#[test]
fn java_kotlin_and_csharp() {
    let java = "package a;\n\nimport a.b.*;\n\nclass C {}\n";
    assert_eq!(add(Lang::Java, java, "import a.b.D;"), java);
    assert_eq!(
        add(Lang::Java, java, "import x.Y;"),
        "package a;\n\nimport a.b.*;\nimport x.Y;\n\nclass C {}\n"
    );
    assert_eq!(
        add(Lang::Java, "package a;\n\nclass C {}\n", "import x.Y"),
        "package a;\n\nimport x.Y;\n\nclass C {}\n"
    );
    let kt = "package a\n\nimport x.Y\n\nfun f() {}\n";
    assert_eq!(add(Lang::Kotlin, kt, "import x.Y"), kt);
    assert_eq!(
        add(Lang::Kotlin, kt, "import x.Z"),
        "package a\n\nimport x.Y\nimport x.Z\n\nfun f() {}\n"
    );
    let cs = "using System;\n\nclass C {}\n";
    assert_eq!(add(Lang::CSharp, cs, "using System;"), cs);
    assert_eq!(
        add(Lang::CSharp, cs, "using System.IO;"),
        "using System;\nusing System.IO;\n\nclass C {}\n"
    );
}

#[test]
fn bad_statements_are_refused() {
    let err = add_import(TS, "x;\n", "logger").expect_err("no import");
    assert_eq!(crate::error::Classify::code(&err), "bad-import");
    assert!(add_import(PY, "x\n", "from m import (").is_err());
    assert!(add_import(Lang::Css, "a {}\n", "@import 'x';").is_err());
}

#[test]
fn unused_imports_go_used_ones_stay() {
    let src = "import { a, b, c } from \"m\";\nb();\n";
    assert_eq!(remove(TS, src, "a"), "import { b, c } from \"m\";\nb();\n");
    assert_eq!(remove(TS, src, "b"), src);
    assert_eq!(remove(TS, src, "c"), "import { a, b } from \"m\";\nb();\n");
    assert_eq!(
        remove(
            TS,
            "import { a } from \"m\";\nimport x from \"x\";\nx();\n",
            "a"
        ),
        "import x from \"x\";\nx();\n"
    );
    assert_eq!(
        remove(TS, "import D, { a } from \"m\";\nD();\n", "a"),
        "import D from \"m\";\nD();\n"
    );
    assert_eq!(
        remove(TS, "import D, { a } from \"m\";\na();\n", "D"),
        "import { a } from \"m\";\na();\n"
    );
    // A name in a comment or a string is no use.
    assert_eq!(
        remove(TS, "import { a } from \"m\";\n\n// a\nf(\"a\");\n", "a"),
        "// a\nf(\"a\");\n"
    );
    let py = "import os\nfrom m import a, b\n\nb()\n";
    assert_eq!(remove(PY, py, "a"), "import os\nfrom m import b\n\nb()\n");
    assert_eq!(remove(PY, py, "os"), "from m import a, b\n\nb()\n");
    let rs = "use a::{B, C};\nuse d::E;\n\nfn f(_: C) {}\n";
    assert_eq!(
        remove(RS, rs, "B"),
        "use a::{C};\nuse d::E;\n\nfn f(_: C) {}\n"
    );
    assert_eq!(remove(RS, rs, "E"), "use a::{B, C};\n\nfn f(_: C) {}\n");
    let go = "package p\n\nimport (\n\t\"fmt\"\n\t\"log\"\n)\n\nfunc f() { fmt.Println() }\n";
    assert_eq!(
        remove(GO, go, "log"),
        "package p\n\nimport (\n\t\"fmt\"\n)\n\nfunc f() { fmt.Println() }\n"
    );
    assert_eq!(remove(GO, go, "fmt"), go);
    let java = "import a.B;\nimport c.D;\n\nclass X { D d; }\n";
    assert_eq!(
        remove(Lang::Java, java, "B"),
        "import c.D;\n\nclass X { D d; }\n"
    );
}

#[test]
fn a_member_name_is_no_use_of_an_import() {
    // `isArray(x)` → `Array.isArray(x)`: the property is not the imported name.
    let ts = "import { isArray } from \"@vue/shared\";\n\nArray.isArray(x);\n";
    assert_eq!(remove(TS, ts, "isArray"), "Array.isArray(x);\n");
    let keys = "import { a } from \"m\";\n\nf({ a: 1 }, o.a, o?.a);\nclass C { a() {} }\n";
    assert_eq!(
        remove(TS, keys, "a"),
        "f({ a: 1 }, o.a, o?.a);\nclass C { a() {} }\n"
    );
    // A bare identifier, a shorthand property and a re-export are uses.
    for used in ["f(a);\n", "f({ a });\n", "export { a };\n", "let x: a.T;\n"] {
        let src = format!("import {{ a }} from \"m\";\n\n{used}");
        assert_eq!(remove(TS, &src, "a"), src, "{used}");
    }
    let nested = "import { T } from \"m\";\n\nlet x: ns.T;\n";
    assert_eq!(remove(TS, nested, "T"), "let x: ns.T;\n");
    let py = "from m import path\n\nos.path.join(f(path=1))\n";
    assert_eq!(remove(PY, py, "path"), "os.path.join(f(path=1))\n");
    let rs = "use a::len;\n\nfn f(s: S) { s.len(); S { len: 1 }; Vec::len(&v); }\n";
    assert_eq!(
        remove(RS, rs, "len"),
        "fn f(s: S) { s.len(); S { len: 1 }; Vec::len(&v); }\n"
    );
    let rs_used = "use a::len;\n\nfn f() { len(); S { len }; }\n";
    assert_eq!(remove(RS, rs_used, "len"), rs_used);
}

#[test]
fn a_python_string_annotation_uses_its_names() {
    for used in [
        "def f() -> \"List[User]\":\n    pass\n",
        "def f(x: \"List[int]\"):\n    pass\n",
        "x: \"Optional[List[int]]\" = None\n",
        "def f(x: Dict[str, \"List\"]):\n    pass\n",
    ] {
        let src = format!("from typing import List\n\n{used}");
        assert_eq!(remove(PY, &src, "List"), src, "{used}");
    }
    // A string elsewhere, or a member inside an annotation, is no use.
    let src = "from typing import List\n\nprint(\"List\")\ndef f() -> \"t.List\":\n    pass\n";
    assert_eq!(
        remove(PY, src, "List"),
        "print(\"List\")\ndef f() -> \"t.List\":\n    pass\n"
    );
}

#[test]
fn a_removed_import_leaves_no_blank_line_out_of_place() {
    // At the top of the file, the blank lines after it go too.
    assert_eq!(remove(PY, "import os\n\n\nx = 1\n", "os"), "x = 1\n");
    assert_eq!(
        remove(TS, "import { a } from \"m\";\r\n\r\nf();\r\n", "a"),
        "f();\r\n"
    );
    // Between blank lines, one of them goes.
    assert_eq!(
        remove(PY, "\"\"\"Doc.\"\"\"\n\nimport os\n\nx = 1\n", "os"),
        "\"\"\"Doc.\"\"\"\n\nx = 1\n"
    );
    assert_eq!(
        remove(PY, "#!/usr/bin/env python\nimport os\n\nx = 1\n", "os"),
        "#!/usr/bin/env python\n\nx = 1\n"
    );
}

#[test]
fn a_name_merged_into_a_multi_line_import_gets_a_line_of_its_own() {
    let ts = "import {\n  a,\n  b,\n} from \"m\";\n\nf();\n";
    assert_eq!(
        add(TS, ts, "import { c } from \"m\""),
        "import {\n  a,\n  b,\n  c,\n} from \"m\";\n\nf();\n"
    );
    let no_trailing = "import {\n  a,\n  b\n} from \"m\";\n";
    assert_eq!(
        add(TS, no_trailing, "import { c, d } from \"m\""),
        "import {\n  a,\n  b,\n  c,\n  d\n} from \"m\";\n"
    );
    let py = "from m import (\n    a,\n    b,  # why\n)\n";
    assert_eq!(
        add(PY, py, "from m import c"),
        "from m import (\n    a,\n    b,  # why\n    c,\n)\n"
    );
    let rs = "use m::{\n    a,\n    b,\n};\n";
    assert_eq!(
        add(RS, rs, "use m::c"),
        "use m::{\n    a,\n    b,\n    c,\n};\n"
    );
    // Names sharing a line keep sharing it.
    let one_line = "import {\n  a, b } from \"m\";\n";
    assert_eq!(
        add(TS, one_line, "import { c } from \"m\""),
        "import {\n  a, b, c } from \"m\";\n"
    );
    assert_eq!(
        add(TS, "import { a } from \"m\";\n", "import { c } from \"m\""),
        "import { a, c } from \"m\";\n"
    );
}

/// A Python file's imports in ruff's groups (`--select I` passes on it).
const GROUPED: &str = "\"\"\"Doc.\"\"\"\n\nfrom __future__ import annotations\n\n\
    import os\nimport sys\nfrom typing import List\n\n\
    import requests\nfrom flask import Flask\n\n\
    from myapp import models\n\n\
    from . import views\nfrom .util import helper\n\n\
    print(os, sys, List, requests, Flask, models, views, helper)\n";

#[test]
fn a_python_import_goes_into_its_group_in_order() {
    let added = |stmt: &str| add(PY, GROUPED, stmt);
    let with = |before: &str, line: &str| GROUPED.replacen(before, &format!("{line}\n{before}"), 1);
    // The standard library, among its own in order (plain imports before `from`).
    assert_eq!(
        added("import asyncio"),
        with("import os\n", "import asyncio")
    );
    assert_eq!(added("import re"), with("import sys\n", "import re"));
    assert_eq!(
        added("from time import sleep"),
        with("from typing", "from time import sleep")
    );
    assert_eq!(
        added("from datetime import timezone"),
        with("from typing", "from datetime import timezone")
    );
    // Third party; a module the file imports already says which group is its.
    assert_eq!(
        added("import httpx"),
        with("import requests\n", "import httpx")
    );
    assert_eq!(
        added("from myapp.db import session"),
        with("\nfrom . import", "from myapp.db import session")
    );
    // Relative: at the end of theirs.
    assert_eq!(
        added("from .forms import Form"),
        with("\nprint(", "from .forms import Form")
    );
    // A section the file lacks: a group of its own in its place.
    let no_third = "import os\n\nfrom . import views\n\nprint(os, views)\n";
    assert_eq!(
        add(PY, no_third, "import httpx"),
        "import os\n\nimport httpx\n\nfrom . import views\n\nprint(os, views)\n"
    );
    assert_eq!(
        add(PY, "import os\n\nprint(os)\n", "from .log import warn"),
        "import os\n\nfrom .log import warn\n\nprint(os)\n"
    );
}

#[test]
fn a_name_bound_by_another_import_is_a_conflict() {
    let conflict = |lang, src: &str, stmt: &str| {
        matches!(add_or_conflict(lang, src, stmt), Ok(Added::Conflict(_)))
    };
    assert!(conflict(
        TS,
        "import { warn } from \"./log\";\n",
        "import { warn } from \"m\""
    ));
    assert!(conflict(
        TS,
        "import warn from \"./log\";\n",
        "import { warn } from \"m\""
    ));
    assert!(conflict(
        TS,
        "import { a as warn } from \"m\";\n",
        "import { warn } from \"m\""
    ));
    assert!(conflict(PY, "from log import warn\n", "from m import warn"));
    // A type-only default beside other names cannot be made a value import alone.
    assert!(conflict(
        TS,
        "import type D, { E } from \"m\";\n",
        "import D from \"m\""
    ));
    // `import os.path` binds `os` too, harmlessly; another name is no conflict.
    assert!(!conflict(PY, "import os.path\n", "import os"));
    assert!(!conflict(
        TS,
        "import { info } from \"./log\";\n",
        "import { warn } from \"m\""
    ));
}

#[test]
fn a_type_only_import_of_the_name_is_made_a_value_import() {
    let stmt = "import { logger } from './log'";
    // The specifier's own `type`, the statement's, and the statement's beside others.
    assert_eq!(
        add(TS, "import { type logger, other } from './log';\n", stmt),
        "import { logger, other } from './log';\n"
    );
    assert_eq!(
        add(TS, "import type { Level, logger } from './log';\n", stmt),
        "import { type Level, logger } from './log';\n"
    );
    assert_eq!(
        add(
            TS,
            "import type logger from './log';\n",
            "import logger from './log'"
        ),
        "import logger from './log';\n"
    );
    // The statement's other names are still added.
    assert_eq!(
        add(
            TS,
            "import type { logger } from './log';\n",
            "import { logger, warn } from './log'"
        ),
        "import { logger, warn } from './log';\n"
    );
}
