#!/usr/bin/env python3
"""Checks the include direction between the folders of src/ against src/LAYERS.

usage: check_layers.py SRC_DIR      exit 0 when every include goes down the layers, 1 (with
                                    one "file:line: why" per offending include) when not
       check_layers.py --self-test  shows that the check fails on a bad include (a copy of
                                    the real LAYERS in a temporary tree), exit 0 when it does

An include is `#include "folder/..."` where `folder` is a folder named in LAYERS; includes of
other paths (system headers, a file of the same folder by its bare name) are not looked at.
"""
import os
import re
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCES = ('.h', '.hpp', '.cpp', '.cc', '.cu', '.cuh')


def read_layers(path):
    """[(folder, allowed set or None)] in order, lowest first."""
    layers = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split('#', 1)[0].strip()
            if not line:
                continue
            name, _, rest = line.partition(' ')
            rest = rest.strip()
            only = None
            if rest:
                if not rest.startswith('only:'):
                    raise SystemExit(f'{path}:{n}: expected "FOLDER" or "FOLDER only: A B ...", got {line!r}')
                only = set(rest[len('only:'):].split())
            layers.append((name, only))
    return layers


def check(src):
    """Returns the list of violations ("file:line: why") of the tree under `src`."""
    layers = read_layers(os.path.join(src, 'LAYERS'))
    rank = {name: i for i, (name, _) in enumerate(layers)}
    errors = []
    for i, (name, only) in enumerate(layers):
        for dep in sorted(only or ()):
            if dep not in rank or rank[dep] >= i:
                errors.append(f'{src}/LAYERS: {name} may include only folders listed before it, not {dep}')
    for entry in sorted(os.listdir(src)):
        if os.path.isdir(os.path.join(src, entry)) and entry not in rank:
            errors.append(f'{src}/{entry}: a folder not in {src}/LAYERS (give it its place in the order)')
    for folder, only in layers:
        top = os.path.join(src, folder)
        for root, dirs, files in os.walk(top):
            dirs.sort()
            for fname in sorted(files):
                if not fname.endswith(SOURCES):
                    continue
                path = os.path.join(root, fname)
                with open(path, errors='replace') as f:
                    for n, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m or '/' not in m.group(1):
                            continue
                        dep = m.group(1).split('/', 1)[0]
                        if dep not in rank or dep == folder:
                            continue
                        if rank[dep] > rank[folder]:
                            errors.append(f'{path}:{n}: {folder} includes "{m.group(1)}": {dep} is above '
                                          f'{folder} in {src}/LAYERS (an include runs upward)')
                        elif only is not None and dep not in only:
                            errors.append(f'{path}:{n}: {folder} includes "{m.group(1)}": {folder} may include '
                                          f'only {", ".join(sorted(only))} ({src}/LAYERS)')
    return errors


def self_test(real_src):
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, 'src')
        os.makedirs(src)
        with open(os.path.join(real_src, 'LAYERS')) as f, open(os.path.join(src, 'LAYERS'), 'w') as out:
            out.write(f.read())
        layers = read_layers(os.path.join(src, 'LAYERS'))
        for name, _ in layers:
            os.makedirs(os.path.join(src, name))

        def write(rel, text):
            with open(os.path.join(src, rel), 'w') as f:
                f.write(text)

        write('detect/good.h', '#pragma once\n#include <vector>\n#include "core/status.h"\n#include "features/x.h"\n')
        write('serve/good.cpp', '#include "serve/good.h"\n#include "engine/engine.h"\n#include "core/clock.h"\n')
        clean = check(src)
        if clean:
            print('self-test: a clean tree was refused:\n  ' + '\n  '.join(clean))
            return 1
        write('serve/bad.h', '#pragma once\n#include "core/event.h"\n#include "detect/alert.h"\n')
        write('serve/worse.cpp', '#include "features/feature_window.h"\n')
        write('core/bad.cpp', '// a lower folder including a higher one\n#include "pipeline/pipeline.h"\n')
        found = check(src)
        expected = [('core/bad.cpp:2:', 'upward'), ('serve/bad.h:3:', 'may include only'),
                    ('serve/worse.cpp:1:', 'may include only')]
        missing = [e for e in expected if not any(e[0] in f and e[1] in f for f in found)]
        print('self-test: the check reports, on a tree with three bad includes:')
        for f in found:
            print('  ' + f)
        if missing or len(found) != len(expected):
            print(f'self-test FAILED: expected {len(expected)} violations {expected}, got {len(found)}')
            return 1
        print('self-test: ok (the check fails on bad includes and passes a clean tree)')
        return 0


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    real_src = os.path.join(os.path.dirname(here), 'src')
    if argv[1:] == ['--self-test']:
        return self_test(real_src)
    if len(argv) != 2:
        print(__doc__)
        return 2
    errors = check(argv[1].rstrip('/'))
    for e in errors:
        print(e)
    if errors:
        print(f'layering: {len(errors)} include(s) against {argv[1]}/LAYERS')
        return 1
    print(f'layering: ok ({argv[1]}/LAYERS)')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
