/* Where the FMU's Python is and how it is loaded: the resource URI, the
 * configuration file resources/wheelset_native.cfg (or the self-contained
 * runtime's paths) and the bootstrap that imports this build's package and
 * its native_bridge. Part of fmi2_frontend.c, which includes it: one
 * translation unit, with its static functions and types. */
/* ---------------------------------------------------- resource location */
static int hex_value(char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* The directory of a file URI (RFC 8089): file:///p, file:/p, file://localhost/p,
 * percent-encoded octets; a plain absolute path is taken as it is. On Windows
 * file:///C:/p gives C:/p. 0, or -1 with the reason in err. */
static int resource_directory(const char *uri, char *out, size_t size, char *err, size_t err_size) {
    const char *p = uri;
    if (uri == NULL || uri[0] == '\0') {
        snprintf(err, err_size, "no fmuResourceLocation given");
        return -1;
    }
    if (strncmp(p, "file:", 5) == 0) {
        p += 5;
        if (strncmp(p, "//", 2) == 0) {
            p += 2;                                   /* authority */
            if (strncmp(p, "localhost/", 10) == 0) p += 9;
            else if (*p != '/') {
                snprintf(err, err_size, "fmuResourceLocation %s names a remote host; only local "
                         "file URIs are supported", uri);
                return -1;
            }
        }
        if (*p != '/') {
            snprintf(err, err_size, "fmuResourceLocation %s is not an absolute file URI", uri);
            return -1;
        }
    } else if (strstr(uri, "://") != NULL) {
        snprintf(err, err_size, "fmuResourceLocation %s is not a file URI", uri);
        return -1;
    }
    size_t n = 0;
    for (; *p; p++) {
        char ch = *p;
        if (ch == '%') {
            int hi = hex_value(p[1]), lo = hi >= 0 ? hex_value(p[2]) : -1;
            if (hi < 0 || lo < 0) {
                snprintf(err, err_size, "fmuResourceLocation %s has a bad percent-encoding", uri);
                return -1;
            }
            ch = (char)(hi * 16 + lo);
            p += 2;
            if (ch == '\0') {
                snprintf(err, err_size, "fmuResourceLocation %s encodes a NUL character", uri);
                return -1;
            }
        }
        if (n + 1 >= size) {
            snprintf(err, err_size, "fmuResourceLocation is too long");
            return -1;
        }
        out[n++] = ch;
    }
    out[n] = '\0';
    /* "/C:/x" -> "C:/x" (Windows drive letters) */
    if (n >= 3 && out[0] == '/' && out[2] == ':' &&
        ((out[1] >= 'A' && out[1] <= 'Z') || (out[1] >= 'a' && out[1] <= 'z'))) {
        memmove(out, out + 1, n);
        n--;
    }
    while (n > 1 && (out[n - 1] == '/' || out[n - 1] == '\\')) out[--n] = '\0';
    return 0;
}

/* ------------------------------------------------------------- configuration */
typedef struct {
    char guid[128];
    char package[128];
    python_location python;
} Config;

static void copy_value(char *dst, size_t size, const char *src) {
    snprintf(dst, size, "%s", src);
}

/* A path of the self-contained runtime as recorded: relative, no "..", no
 * backslash, no colon or semicolon (list separators), at most 1024 characters. */
static int safe_relative(const char *p) {
    if (p[0] == '\0' || p[0] == '/' || strlen(p) > 1024) return 0;
    for (const char *q = p; *q; q++)
        if (*q == '\\' || *q == ':' || *q == ';' || (unsigned char)*q < 32) return 0;
    for (const char *q = p; q != NULL; q = strchr(q, '/')) {
        if (*q == '/') q++;
        if (q[0] == '.' && q[1] == '.' && (q[2] == '/' || q[2] == '\0')) return 0;
    }
    return 1;
}

/* One recorded path of the runtime, made absolute: <resources>/<runtime>/<relative>. */
static int runtime_path(char *out, size_t size, const char *resources, const char *runtime,
                        const char *relative, const char *what, const char *cfg_path,
                        char *err, size_t err_size) {
    if (!safe_relative(relative)) {
        snprintf(err, err_size, "%s: the runtime's %s path is not a plain relative path", cfg_path, what);
        return -1;
    }
    int n = strcmp(relative, ".") == 0 ? snprintf(out, size, "%s/%s", resources, runtime)
                                       : snprintf(out, size, "%s/%s/%s", resources, runtime, relative);
    if (n < 0 || (size_t)n >= size) {
        snprintf(err, err_size, "the path of the FMU's resources is too long");
        return -1;
    }
    return 0;
}

/* A self-contained FMU: every path of the interpreter record points into the
 * FMU's own resources/<runtime>/ (never to the build machine, never to what
 * the environment names: WHEELSET_FMU_LIBPYTHON, WHEELSET_FMU_PYTHONHOME and
 * WHEELSET_FMU_SITE_PACKAGES are ignored; docs/SECURITY.md). */
static int standalone_paths(const char *resources, const char *runtime, python_location *where,
                            const char *cfg_path, char *err, size_t err_size) {
    for (const char *q = runtime; *q; q++)
        if (!((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '_')) runtime = "";
    if (runtime[0] == '\0') {
        snprintf(err, err_size, "%s: a self-contained FMU must name its runtime folder (letters, "
                 "digits, '_')", cfg_path);
        return -1;
    }
    python_location rel = *where;
    if (runtime_path(where->libpython, sizeof where->libpython, resources, runtime, rel.libpython,
                     "libpython", cfg_path, err, err_size) != 0 ||
        runtime_path(where->home, sizeof where->home, resources, runtime, rel.home,
                     "home", cfg_path, err, err_size) != 0 ||
        runtime_path(where->site_packages, sizeof where->site_packages, resources, runtime,
                     rel.site_packages, "site-packages", cfg_path, err, err_size) != 0 ||
        runtime_path(where->worker, sizeof where->worker, resources, runtime, rel.worker,
                     "worker", cfg_path, err, err_size) != 0)
        return -1;
    /* the preload list: relative paths separated by ',' */
    where->preload[0] = '\0';
    size_t used = 0;
    const char *p = rel.preload;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char one[1100], full[4096];
        if (len == 0 || len >= sizeof one) {
            snprintf(err, err_size, "%s: a bad preload entry", cfg_path);
            return -1;
        }
        memcpy(one, p, len);
        one[len] = '\0';
        if (runtime_path(full, sizeof full, resources, runtime, one, "preload", cfg_path, err, err_size) != 0)
            return -1;
        int n = snprintf(where->preload + used, sizeof where->preload - used, "%s%s",
                         used ? "\n" : "", full);
        if (n < 0 || (size_t)n >= sizeof where->preload - used) {
            snprintf(err, err_size, "%s: the preload list is too long", cfg_path);
            return -1;
        }
        used += (size_t)n;
        p = comma ? comma + 1 : p + len;
    }
    return 0;
}

/* resources/wheelset_native.cfg: "key=value" lines (parsed, never executed) */
static int read_config(const char *resources, Config *cfg, char *err, size_t err_size) {
    char path[8192];
    memset(cfg, 0, sizeof *cfg);
    snprintf(path, sizeof path, "%s/%s", resources, CONFIG_FILE);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, err_size, "cannot read %s (the FMU's resources are incomplete or the "
                 "fmuResourceLocation is wrong)", path);
        return -1;
    }
    char line[8192];
    char runtime[128] = "";
    while (fgets(line, sizeof line, f) != NULL) {
        size_t len = strlen(line);
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        if (line[0] == '#' || line[0] == '\0') continue;
        char *eq = strchr(line, '=');
        if (eq == NULL) continue;
        *eq = '\0';
        const char *key = line, *value = eq + 1;
        if (strcmp(key, "guid") == 0) copy_value(cfg->guid, sizeof cfg->guid, value);
        else if (strcmp(key, "package") == 0) copy_value(cfg->package, sizeof cfg->package, value);
        else if (strcmp(key, "libpython") == 0) copy_value(cfg->python.libpython, sizeof cfg->python.libpython, value);
        else if (strcmp(key, "home") == 0) copy_value(cfg->python.home, sizeof cfg->python.home, value);
        else if (strcmp(key, "site_packages") == 0) copy_value(cfg->python.site_packages, sizeof cfg->python.site_packages, value);
        else if (strcmp(key, "python_version") == 0) copy_value(cfg->python.python_version, sizeof cfg->python.python_version, value);
        else if (strcmp(key, "standalone") == 0) cfg->python.standalone = strcmp(value, "1") == 0;
        else if (strcmp(key, "runtime") == 0) copy_value(runtime, sizeof runtime, value);
        else if (strcmp(key, "worker") == 0) copy_value(cfg->python.worker, sizeof cfg->python.worker, value);
        else if (strcmp(key, "preload") == 0) copy_value(cfg->python.preload, sizeof cfg->python.preload, value);
    }
    fclose(f);
    if (cfg->package[0] == '\0' || cfg->guid[0] == '\0') {
        snprintf(err, err_size, "%s names no package or GUID", path);
        return -1;
    }
    for (const char *q = cfg->package; *q; q++) {
        if (!((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '_')) {
            snprintf(err, err_size, "%s: bad package name", path);
            return -1;
        }
    }
    if (cfg->python.standalone) return standalone_paths(resources, runtime, &cfg->python, path, err, err_size);
    /* a moved installation: the environment overrides what the build recorded */
    const char *v;
    if ((v = platform_getenv("WHEELSET_FMU_LIBPYTHON")) != NULL) copy_value(cfg->python.libpython, sizeof cfg->python.libpython, v);
    if ((v = platform_getenv("WHEELSET_FMU_PYTHONHOME")) != NULL) copy_value(cfg->python.home, sizeof cfg->python.home, v);
    if ((v = platform_getenv("WHEELSET_FMU_SITE_PACKAGES")) != NULL) copy_value(cfg->python.site_packages, sizeof cfg->python.site_packages, v);
    return 0;
}

/* Python run once per library load: imports this build's package by file
 * location (never through sys.path); arguments arrive as objects.
 *
 * Before the first import, the packages the FMU needs (REQUIRED) must be
 * importable. In a host's own interpreter (FMPy in a plain `pip install fmpy`
 * environment) that lacks some, the site-packages recorded at build time are
 * appended to the END of sys.path (the host's own packages keep precedence;
 * no .pth file is run) when the host runs the recorded Python version, and the
 * missing packages are imported once to prove it. What still fails is an
 * ImportError naming each missing package, where it was looked for, and the
 * remedies: WHEELSET_FMU_OUT_OF_PROCESS=1 (the FMU in its own worker Python)
 * or installing the packages into the host's environment.
 *
 * Two host threads doing their first fmi2Instantiate at once load the bridge
 * and import the core one after the other (one lock for the process, kept on
 * the sys module and shared with core_loader.IMPORT_LOCK: the bootstrap may run
 * in both threads, each run takes the same lock): numba's modules import each
 * other, and two threads importing them at once can see a partly initialised
 * module.
 *
 * In an interpreter the FMU started itself (not joined) numba's target is
 * chosen before numba is imported (cache.choose_numba_target: this CPU when
 * it is the build machine's, else a generic x86-64, whose shipped cache fits
 * any x86-64 CPU). */
static const char *BOOTSTRAP =
    "import importlib, importlib.util, os, sys\n"
    "REQUIRED = ('numpy', 'scipy', 'numba')\n"
    "checked = []\n"
    "def require_packages(site_dirs, version, joined):\n"
    "    if checked:\n"
    "        return\n"
    "    missing = [m for m in REQUIRED if importlib.util.find_spec(m) is None]\n"
    "    here = '%d.%d' % sys.version_info[:2]\n"
    "    dirs = [d for d in site_dirs.split(os.pathsep) if d]\n"
    "    if missing and joined and here == version:\n"
    "        added = [d for d in dirs if os.path.isdir(d) and d not in sys.path]\n"
    "        sys.path.extend(added)\n"
    "        importlib.invalidate_caches()\n"
    "    problems = []\n"
    "    for m in missing:\n"
    "        try:\n"
    "            importlib.import_module(m)\n"
    "        except Exception as exc:\n"
    "            problems.append(f'{m} ({type(exc).__name__}: {exc})')\n"
    "    if problems:\n"
    "        where = 'the host\\'s Python ' + here if joined else 'the embedded Python ' + here\n"
    "        looked = ', '.join(dirs) or 'none recorded'\n"
    "        if joined and here != version:\n"
    "            looked += f' (not used: recorded for Python {version})'\n"
    "        raise ImportError(f'{where} lacks the package(s) the FMU needs: ' + '; '.join(problems)\n"
    "                          + f'. Looked in its sys.path and in the recorded site-packages ({looked}). '\n"
    "                          'Run the FMU in its own worker process with WHEELSET_FMU_OUT_OF_PROCESS=1, '\n"
    "                          'install numpy, scipy and numba into the host\\'s Python, or set '\n"
    "                          'WHEELSET_FMU_SITE_PACKAGES to where they are')\n"
    "    checked.append(True)\n"
    "import threading\n"
    "# the process's one lock for the FMU's imports (core_loader.IMPORT_LOCK)\n"
    "loading = sys.__dict__.setdefault('_wheelset_fmu_import_lock', threading.RLock())\n"
    "def load_bridge(name, resources, site_dirs, version, joined):\n"
    "    with loading:\n"
    "        return load_bridge_once(name, resources, site_dirs, version, joined)\n"
    "def load_bridge_once(name, resources, site_dirs, version, joined):\n"
    "    require_packages(site_dirs, version, joined)\n"
    "    package = sys.modules.get(name)\n"
    "    if package is None:\n"
    "        directory = os.path.join(resources, name)\n"
    "        spec = importlib.util.spec_from_file_location(\n"
    "            name, os.path.join(directory, '__init__.py'),\n"
    "            submodule_search_locations=[directory])\n"
    "        if spec is None:\n"
    "            raise ImportError(f'no package {name} in {resources}')\n"
    "        package = importlib.util.module_from_spec(spec)\n"
    "        sys.modules[name] = package\n"
    "        try:\n"
    "            spec.loader.exec_module(package)\n"
    "        except BaseException:\n"
    "            del sys.modules[name]\n"
    "            raise\n"
    "        if not joined:\n"
    "            cache = importlib.import_module(name + '.cache')\n"
    "            cache.choose_numba_target(os.path.join(resources, cache.SHIPPED_CACHE_DIR))\n"
    "    return importlib.import_module(name + '.native_bridge')\n";

static PyObject *load_bridge_function = NULL;

static PyObject *import_bridge(const char *package, const char *resources, const python_location *where_python,
                               int joined, char *err, size_t err_size) {
    if (load_bridge_function == NULL) {
        PyObject *globals = py.DictNew();
        if (globals == NULL) goto failed;
        py.DictSetItemString(globals, "__builtins__", py.EvalGetBuiltins());
        PyObject *r = py.RunString(BOOTSTRAP, 257, globals, globals);
        if (r == NULL) { py.DecRef(globals); goto failed; }
        py.DecRef(r);
        /* another thread may have run the bootstrap meanwhile (running Python
         * lets the GIL go): keep the first function (both use the one lock) */
        PyObject *loader = py.DictGetItemString(globals, "load_bridge");   /* borrowed */
        if (load_bridge_function == NULL && loader != NULL) {
            py.IncRef(loader);
            load_bridge_function = loader;
        }
        py.DecRef(globals);
        if (load_bridge_function == NULL) goto failed;
    }
    PyObject *name = py.UnicodeFromString(package);
    PyObject *where = py.UnicodeDecodeFSDefault(resources);
    PyObject *site_dirs = py.UnicodeDecodeFSDefault(where_python->site_packages);
    PyObject *version = py.UnicodeFromString(where_python->python_version);
    PyObject *is_joined = py.LongFromLong(joined);
    PyObject *module = (name && where && site_dirs && version && is_joined)
        ? py.CallFunctionObjArgs(load_bridge_function, name, where, site_dirs, version, is_joined, NULL)
        : NULL;
    if (name) py.DecRef(name);
    if (where) py.DecRef(where);
    if (site_dirs) py.DecRef(site_dirs);
    if (version) py.DecRef(version);
    if (is_joined) py.DecRef(is_joined);
    if (module != NULL) return module;
failed: {
        char reason[MESSAGE_SIZE - 256];
        python_error_text(reason, sizeof reason);
        snprintf(err, err_size, "cannot import the FMU's Python code (%s in %s): %s",
                 package, resources, reason);
    }
    return NULL;
}
