#!/usr/bin/env python3
"""Writes resources/samples/dump/: the bundled sample XLA dump directory.

An MLP training step (`jit_train_step`: two dense layers, softmax cross-entropy, SGD update)
as XLA's GPU compiler would dump it with --xla_dump_hlo_pass_re: before_optimizations, one
state per pass (some passes change the module, some do not), after_optimizations with fusions,
the buffer assignment and an HLO snapshot with arguments and result; plus a small
`jit_accuracy` module (before/after optimizations only). File names follow XLA's dump naming
(../shared/docs/hlo-format.md section 5).

The HLO is written here; the snapshot is made by the project itself: `hlowb convert` turns the
optimized module into an HloSnapshot text proto, `hlowb replay` runs it on the reference
evaluator to get the result, and `hlowb convert --format=snapshot` writes the binary snapshot.
The script checks that every state verifies and that the unoptimized and optimized modules
compute the same result.

usage: resources/samples/make_sample_dump.py [HLOWB_BINARY]   (default: build/dev/app/hlowb)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HLOWB = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, 'build', 'dev', 'app', 'hlowb')
out = os.path.join(ROOT, 'resources', 'samples', 'dump')
TIMESTAMP = '1718112000123456'  # XLA prefixes snapshots with the module's first-dump time (us)

M = 'jit_train_step'
P = 'module_0001.' + M

def md(op_type, op_name, line):
    return ('metadata={op_type="%s" op_name="jit(train_step)/jit(main)/%s" '
            'source_file="/home/user/mlp/train.py" source_line=%d}' % (op_type, op_name, line))

ALIAS = ('input_output_alias={ {1}: (0, {}, may-alias), {2}: (1, {}, may-alias), '
         '{3}: (2, {}, may-alias), {4}: (3, {}, may-alias) }')
LAYOUT = ('entry_computation_layout={(f32[32]{0}, f32[4]{0}, f32[16,32]{1,0}, f32[32,4]{1,0}, '
          'f32[8,16]{1,0}, /*index=5*/s32[8]{0}, f32[])->(f32[], f32[32]{0}, f32[4]{0}, '
          'f32[16,32]{1,0}, f32[32,4]{1,0}, /*index=5*/f32[])}')

def header(scheduled=False):
    return 'HloModule %s, %s%s, %s\n' % (M, 'is_scheduled=true, ' if scheduled else '', ALIAS, LAYOUT)

def region(name, a, b, op, result, op_type):
    return ('%%%s (Arg_0.%d: f32[], Arg_1.%d: f32[]) -> f32[] {\n'
            '  %%Arg_0.%d = f32[] parameter(0)\n'
            '  %%Arg_1.%d = f32[] parameter(1)\n'
            '  ROOT %%%s = f32[] %s(f32[] %%Arg_0.%d, f32[] %%Arg_1.%d), %s\n'
            '}\n\n') % (name, a, b, a, b, result, op, a, b,
                        md(op_type, 'transpose(jvp(mlp))/' + op_type if 'grad' in name else op_type, 30))

REGIONS = (
    '%region_0.23 (Arg_0.24: f32[], Arg_1.25: f32[]) -> f32[] {\n'
    '  %Arg_0.24 = f32[] parameter(0)\n'
    '  %Arg_1.25 = f32[] parameter(1)\n'
    '  ROOT %maximum.26 = f32[] maximum(f32[] %Arg_0.24, f32[] %Arg_1.25), ' + md('reduce_max', 'jvp(loss)/reduce_max', 31) + '\n'
    '}\n\n')
for name, a, b, res, opn, line in [('region_1.32', 33, 34, 'add.35', 'jvp(loss)/reduce_sum', 31),
                                   ('region_2.46', 47, 48, 'add.49', 'jvp(loss)/reduce_sum', 33),
                                   ('region_3.62', 63, 64, 'add.65', 'transpose(jvp(loss))/reduce_sum', 31),
                                   ('region_4.72', 73, 74, 'add.75', 'transpose(jvp(mlp))/dense_1/reduce_sum', 24),
                                   ('region_5.85', 86, 87, 'add.88', 'transpose(jvp(mlp))/dense_0/reduce_sum', 22)]:
    REGIONS += ('%%%s (Arg_0.%d: f32[], Arg_1.%d: f32[]) -> f32[] {\n'
                '  %%Arg_0.%d = f32[] parameter(0)\n'
                '  %%Arg_1.%d = f32[] parameter(1)\n'
                '  ROOT %%%s = f32[] add(f32[] %%Arg_0.%d, f32[] %%Arg_1.%d), %s\n'
                '}\n\n') % (name, a, b, a, b, res, a, b, md('reduce_sum', opn, line))

ENTRY_SIG = ('ENTRY %main.113 (Arg_0.1: f32[32], Arg_1.2: f32[4], Arg_2.3: f32[16,32], Arg_3.4: f32[32,4], '
             'Arg_4.5: f32[8,16], Arg_5.6: s32[8], Arg_6.7: f32[]) -> (f32[], f32[32], f32[4], f32[16,32], '
             'f32[32,4], /*index=5*/f32[]) {\n')
PARAMS = [
    "%Arg_0.1 = f32[32]{0} parameter(0), metadata={op_name=\"params[\\'b1\\']\"}",
    "%Arg_1.2 = f32[4]{0} parameter(1), metadata={op_name=\"params[\\'b2\\']\"}",
    "%Arg_2.3 = f32[16,32]{1,0} parameter(2), metadata={op_name=\"params[\\'w1\\']\"}",
    "%Arg_3.4 = f32[32,4]{1,0} parameter(3), metadata={op_name=\"params[\\'w2\\']\"}",
    "%Arg_4.5 = f32[8,16]{1,0} parameter(4), metadata={op_name=\"batch[\\'x\\']\"}",
    "%Arg_5.6 = s32[8]{0} parameter(5), metadata={op_name=\"batch[\\'labels\\']\"}",
    "%Arg_6.7 = f32[] parameter(6), metadata={op_name=\"opt_state.learning_rate\"}",
]

D0 = 'jvp(mlp)/dense_0/'
D1 = 'jvp(mlp)/dense_1/'
T0 = 'transpose(jvp(mlp))/dense_0/'
T1 = 'transpose(jvp(mlp))/dense_1/'
L = 'jvp(loss)/'
TL = 'transpose(jvp(loss))/'
U = 'sgd/'

# Instruction lines keyed by name so states can add, drop and replace them.
I = {}
def add(name, text):
    I[name] = '%' + name + ' = ' + text

add('dot.8', 'f32[8,32]{1,0} dot(f32[8,16]{1,0} %Arg_4.5, f32[16,32]{1,0} %Arg_2.3), lhs_contracting_dims={1}, rhs_contracting_dims={0}, ' + md('dot_general', D0 + 'dot_general', 21))
add('reshape.9', 'f32[1,32]{1,0} reshape(f32[32]{0} %Arg_0.1), ' + md('reshape', D0 + 'reshape', 21))
add('broadcast.10', 'f32[1,32]{1,0} broadcast(f32[1,32]{1,0} %reshape.9), dimensions={0,1}, ' + md('broadcast_in_dim', D0 + 'broadcast_in_dim', 21))
add('reshape.11', 'f32[32]{0} reshape(f32[1,32]{1,0} %broadcast.10), ' + md('reshape', D0 + 'reshape', 21))
add('broadcast.12', 'f32[8,32]{1,0} broadcast(f32[32]{0} %reshape.11), dimensions={1}, ' + md('add', D0 + 'add', 21))
add('add.13', 'f32[8,32]{1,0} add(f32[8,32]{1,0} %dot.8, f32[8,32]{1,0} %broadcast.12), ' + md('add', D0 + 'add', 21))
add('constant.14', 'f32[] constant(0)')
add('broadcast.15', 'f32[8,32]{1,0} broadcast(f32[] %constant.14), dimensions={}')
add('maximum.16', 'f32[8,32]{1,0} maximum(f32[8,32]{1,0} %add.13, f32[8,32]{1,0} %broadcast.15), ' + md('max', 'jvp(mlp)/relu/max', 22))
add('dot.17', 'f32[8,4]{1,0} dot(f32[8,32]{1,0} %maximum.16, f32[32,4]{1,0} %Arg_3.4), lhs_contracting_dims={1}, rhs_contracting_dims={0}, ' + md('dot_general', D1 + 'dot_general', 23))
add('reshape.18', 'f32[1,4]{1,0} reshape(f32[4]{0} %Arg_1.2), ' + md('reshape', D1 + 'reshape', 23))
add('reshape.19', 'f32[4]{0} reshape(f32[1,4]{1,0} %reshape.18), ' + md('reshape', D1 + 'reshape', 23))
add('broadcast.20', 'f32[8,4]{1,0} broadcast(f32[4]{0} %reshape.19), dimensions={1}, ' + md('add', D1 + 'add', 23))
add('add.21', 'f32[8,4]{1,0} add(f32[8,4]{1,0} %dot.17, f32[8,4]{1,0} %broadcast.20), ' + md('add', D1 + 'add', 23))
add('constant.22', 'f32[] constant(-inf)')
add('reduce.27', 'f32[8]{0} reduce(f32[8,4]{1,0} %add.21, f32[] %constant.22), dimensions={1}, to_apply=%region_0.23, ' + md('reduce_max', L + 'reduce_max', 31))
add('broadcast.28', 'f32[8,4]{1,0} broadcast(f32[8]{0} %reduce.27), dimensions={0}, ' + md('sub', L + 'sub', 31))
add('subtract.29', 'f32[8,4]{1,0} subtract(f32[8,4]{1,0} %add.21, f32[8,4]{1,0} %broadcast.28), ' + md('sub', L + 'sub', 31))
add('exponential.30', 'f32[8,4]{1,0} exponential(f32[8,4]{1,0} %subtract.29), ' + md('exp', L + 'exp', 31))
add('constant.31', 'f32[] constant(0)')
add('reduce.36', 'f32[8]{0} reduce(f32[8,4]{1,0} %exponential.30, f32[] %constant.31), dimensions={1}, to_apply=%region_1.32, ' + md('reduce_sum', L + 'reduce_sum', 31))
add('log.37', 'f32[8]{0} log(f32[8]{0} %reduce.36), ' + md('log', L + 'log', 31))
add('broadcast.38', 'f32[8,4]{1,0} broadcast(f32[8]{0} %log.37), dimensions={0}, ' + md('sub', L + 'sub', 31))
add('subtract.39', 'f32[8,4]{1,0} subtract(f32[8,4]{1,0} %subtract.29, f32[8,4]{1,0} %broadcast.38), ' + md('sub', L + 'sub', 31))
add('iota.40', 's32[8,4]{1,0} iota(), iota_dimension=1, ' + md('eq', L + 'eq', 32))
add('broadcast.41', 's32[8,4]{1,0} broadcast(s32[8]{0} %Arg_5.6), dimensions={0}, ' + md('eq', L + 'eq', 32))
add('compare.42', 'pred[8,4]{1,0} compare(s32[8,4]{1,0} %broadcast.41, s32[8,4]{1,0} %iota.40), direction=EQ, ' + md('eq', L + 'eq', 32))
add('convert.43', 'f32[8,4]{1,0} convert(pred[8,4]{1,0} %compare.42), ' + md('convert_element_type', L + 'convert_element_type', 32))
add('multiply.44', 'f32[8,4]{1,0} multiply(f32[8,4]{1,0} %convert.43, f32[8,4]{1,0} %subtract.39), ' + md('mul', L + 'mul', 33))
add('constant.45', 'f32[] constant(0)')
add('reduce.50', 'f32[] reduce(f32[8,4]{1,0} %multiply.44, f32[] %constant.45), dimensions={0,1}, to_apply=%region_2.46, ' + md('reduce_sum', L + 'reduce_sum', 33))
add('negate.51', 'f32[] negate(f32[] %reduce.50), ' + md('neg', L + 'neg', 33))
add('constant.52', 'f32[] constant(8)')
add('divide.53', 'f32[] divide(f32[] %negate.51, f32[] %constant.52), ' + md('div', L + 'div', 33))
add('constant.54', 'f32[] constant(1)')
add('constant.55', 'f32[] constant(8)')
add('divide.56', 'f32[] divide(f32[] %constant.54, f32[] %constant.55), ' + md('div', TL + 'div', 33))
add('negate.57', 'f32[] negate(f32[] %divide.56), ' + md('neg', TL + 'neg', 33))
add('broadcast.58', 'f32[8,4]{1,0} broadcast(f32[] %negate.57), dimensions={}, ' + md('mul', TL + 'mul', 33))
add('multiply.59', 'f32[8,4]{1,0} multiply(f32[8,4]{1,0} %broadcast.58, f32[8,4]{1,0} %convert.43), ' + md('mul', TL + 'mul', 33))
add('negate.60', 'f32[8,4]{1,0} negate(f32[8,4]{1,0} %multiply.59), ' + md('neg', TL + 'neg', 31))
add('constant.61', 'f32[] constant(0)')
add('reduce.66', 'f32[8]{0} reduce(f32[8,4]{1,0} %negate.60, f32[] %constant.61), dimensions={1}, to_apply=%region_3.62, ' + md('reduce_sum', TL + 'reduce_sum', 31))
add('divide.67', 'f32[8]{0} divide(f32[8]{0} %reduce.66, f32[8]{0} %reduce.36), ' + md('div', TL + 'div', 31))
add('broadcast.68', 'f32[8,4]{1,0} broadcast(f32[8]{0} %divide.67), dimensions={0}, ' + md('mul', TL + 'mul', 31))
add('multiply.69', 'f32[8,4]{1,0} multiply(f32[8,4]{1,0} %broadcast.68, f32[8,4]{1,0} %exponential.30), ' + md('mul', TL + 'mul', 31))
add('add.70', 'f32[8,4]{1,0} add(f32[8,4]{1,0} %multiply.59, f32[8,4]{1,0} %multiply.69), ' + md('add_any', TL + 'add_any', 31))
add('constant.71', 'f32[] constant(0)')
add('reduce.76', 'f32[4]{0} reduce(f32[8,4]{1,0} %add.70, f32[] %constant.71), dimensions={0}, to_apply=%region_4.72, ' + md('reduce_sum', T1 + 'reduce_sum', 23))
add('dot.77', 'f32[4,32]{1,0} dot(f32[8,4]{1,0} %add.70, f32[8,32]{1,0} %maximum.16), lhs_contracting_dims={0}, rhs_contracting_dims={0}, ' + md('dot_general', T1 + 'dot_general', 23))
add('transpose.78', 'f32[32,4]{1,0} transpose(f32[4,32]{1,0} %dot.77), dimensions={1,0}, ' + md('transpose', T1 + 'transpose', 23))
add('dot.79', 'f32[8,32]{1,0} dot(f32[8,4]{1,0} %add.70, f32[32,4]{1,0} %Arg_3.4), lhs_contracting_dims={1}, rhs_contracting_dims={1}, ' + md('dot_general', T1 + 'dot_general', 23))
add('constant.80', 'f32[] constant(0)')
add('broadcast.81', 'f32[8,32]{1,0} broadcast(f32[] %constant.80), dimensions={}')
add('compare.82', 'pred[8,32]{1,0} compare(f32[8,32]{1,0} %add.13, f32[8,32]{1,0} %broadcast.81), direction=GT, ' + md('gt', 'transpose(jvp(mlp))/relu/gt', 22))
add('select.83', 'f32[8,32]{1,0} select(pred[8,32]{1,0} %compare.82, f32[8,32]{1,0} %dot.79, f32[8,32]{1,0} %broadcast.81), ' + md('select_n', 'transpose(jvp(mlp))/relu/select_n', 22))
add('constant.84', 'f32[] constant(0)')
add('reduce.89', 'f32[32]{0} reduce(f32[8,32]{1,0} %select.83, f32[] %constant.84), dimensions={0}, to_apply=%region_5.85, ' + md('reduce_sum', T0 + 'reduce_sum', 21))
add('dot.90', 'f32[32,16]{1,0} dot(f32[8,32]{1,0} %select.83, f32[8,16]{1,0} %Arg_4.5), lhs_contracting_dims={0}, rhs_contracting_dims={0}, ' + md('dot_general', T0 + 'dot_general', 21))
add('transpose.91', 'f32[16,32]{1,0} transpose(f32[32,16]{1,0} %dot.90), dimensions={1,0}, ' + md('transpose', T0 + 'transpose', 21))
for n, (shape, grad, param, line) in enumerate([('f32[32]{0}', 'reduce.89', 'Arg_0.1', 41),
                                                ('f32[4]{0}', 'reduce.76', 'Arg_1.2', 41),
                                                ('f32[16,32]{1,0}', 'transpose.91', 'Arg_2.3', 41),
                                                ('f32[32,4]{1,0}', 'transpose.78', 'Arg_3.4', 41)]):
    b, m, s = 92 + 3 * n, 93 + 3 * n, 94 + 3 * n
    add('broadcast.%d' % b, '%s broadcast(f32[] %%Arg_6.7), dimensions={}, %s' % (shape, md('mul', U + 'mul', line)))
    add('multiply.%d' % m, '%s multiply(%s %%broadcast.%d, %s %%%s), %s' % (shape, shape, b, shape, grad, md('mul', U + 'mul', line)))
    add('subtract.%d' % s, '%s subtract(%s %%%s, %s %%multiply.%d), %s' % (shape, shape, param, shape, m, md('sub', U + 'sub', line)))
TUPLE_T = '(f32[], f32[32]{0}, f32[4]{0}, f32[16,32]{1,0}, f32[32,4]{1,0}, /*index=5*/f32[])'
def tuple_line(loss, b1, b2, w1, w2, lr):
    return ('ROOT %%tuple.104 = %s tuple(f32[] %%%s, f32[32]{0} %%%s, f32[4]{0} %%%s, f32[16,32]{1,0} %%%s, '
            'f32[32,4]{1,0} %%%s, /*index=5*/f32[] %%%s)') % (TUPLE_T, loss, b1, b2, w1, w2, lr)

ORDER = list(I.keys())

def module(names, root, extra_comps='', scheduled=False):
    body = '\n'.join('  ' + I[n] for n in names)
    return (header(scheduled) + '\n' + REGIONS + extra_comps + ENTRY_SIG +
            '\n'.join('  ' + p for p in PARAMS) + '\n' + body + '\n  ' + root + '\n}\n\n')

def write(stage, text):
    with open(os.path.join(out, '%s.%s.txt' % (P, stage)), 'w') as f:
        f.write(text)

# Start from an empty directory.
if os.path.isdir(out):
    shutil.rmtree(out)
os.makedirs(out)

# --- before_optimizations and 0000 (pipeline start: identical)
before = module(ORDER, tuple_line('divide.53', 'subtract.94', 'subtract.97', 'subtract.100', 'subtract.103', 'Arg_6.7'))
write('before_optimizations', before)
write('0000.simplification.after_pipeline-start.before_algsimp', before)

# --- 0001 algsimp: reshape chains folded into broadcasts, transpose(dot) folded into dot,
# division by a constant becomes multiplication, constant arithmetic folded.
add('broadcast.12', 'f32[8,32]{1,0} broadcast(f32[32]{0} %Arg_0.1), dimensions={1}, ' + md('add', D0 + 'add', 21))
add('broadcast.20', 'f32[8,4]{1,0} broadcast(f32[4]{0} %Arg_1.2), dimensions={1}, ' + md('add', D1 + 'add', 23))
add('constant.105', 'f32[] constant(0.125)')
add('multiply.106', 'f32[] multiply(f32[] %negate.51, f32[] %constant.105), ' + md('div', L + 'div', 33))
add('constant.111', 'f32[] constant(-0.125)')
add('broadcast.58', 'f32[8,4]{1,0} broadcast(f32[] %constant.111), dimensions={}, ' + md('mul', TL + 'mul', 33))
add('dot.107', 'f32[32,4]{1,0} dot(f32[8,32]{1,0} %maximum.16, f32[8,4]{1,0} %add.70), lhs_contracting_dims={0}, rhs_contracting_dims={0}, ' + md('dot_general', T1 + 'dot_general', 23))
add('dot.108', 'f32[16,32]{1,0} dot(f32[8,16]{1,0} %Arg_4.5, f32[8,32]{1,0} %select.83), lhs_contracting_dims={0}, rhs_contracting_dims={0}, ' + md('dot_general', T0 + 'dot_general', 21))
add('multiply.99', 'f32[16,32]{1,0} multiply(f32[16,32]{1,0} %broadcast.98, f32[16,32]{1,0} %dot.108), ' + md('mul', U + 'mul', 41))
add('multiply.102', 'f32[32,4]{1,0} multiply(f32[32,4]{1,0} %broadcast.101, f32[32,4]{1,0} %dot.107), ' + md('mul', U + 'mul', 41))

def replace_in_order(order, old, new_list):
    i = order.index(old)
    return order[:i] + new_list + order[i + 1:]

o = [n for n in ORDER if n not in ('reshape.9', 'broadcast.10', 'reshape.11', 'reshape.18', 'reshape.19',
                                   'constant.52', 'constant.54', 'constant.55', 'divide.56', 'negate.57')]
o = replace_in_order(o, 'divide.53', ['constant.105', 'multiply.106'])
o = replace_in_order(o, 'broadcast.58', ['constant.111', 'broadcast.58'])
o = replace_in_order(o, 'dot.77', ['dot.107'])
o.remove('transpose.78')
o = replace_in_order(o, 'dot.90', ['dot.108'])
o.remove('transpose.91')
ROOT1 = tuple_line('multiply.106', 'subtract.94', 'subtract.97', 'subtract.100', 'subtract.103', 'Arg_6.7')
write('0001.simplification.after_algsimp.before_cse', module(o, ROOT1))

# --- 0002 cse: the zero constants and the duplicate zero broadcast are merged.
for c, (name, text) in {
        'reduce.36': ('reduce.36', I['reduce.36'].split(' = ', 1)[1].replace('%constant.31', '%constant.14')),
        'reduce.50': ('reduce.50', I['reduce.50'].split(' = ', 1)[1].replace('%constant.45', '%constant.14')),
        'reduce.66': ('reduce.66', I['reduce.66'].split(' = ', 1)[1].replace('%constant.61', '%constant.14')),
        'reduce.76': ('reduce.76', I['reduce.76'].split(' = ', 1)[1].replace('%constant.71', '%constant.14')),
        'reduce.89': ('reduce.89', I['reduce.89'].split(' = ', 1)[1].replace('%constant.84', '%constant.14')),
        'compare.82': ('compare.82', I['compare.82'].split(' = ', 1)[1].replace('%broadcast.81', '%broadcast.15')),
        'select.83': ('select.83', I['select.83'].split(' = ', 1)[1].replace('%broadcast.81', '%broadcast.15')),
}.items():
    add(name, text)
o = [n for n in o if n not in ('constant.31', 'constant.45', 'constant.61', 'constant.71', 'constant.80',
                               'broadcast.81', 'constant.84')]
write('0002.simplification.after_cse.before_dce', module(o, ROOT1))
write('0003.simplification.after_dce.before_pipeline-end', module(o, ROOT1))
write('0004.layout-assignment.after_pipeline-start.before_layout-assignment', module(o, ROOT1))

# --- 0005 layout-assignment: the operands contracted along their major dimension get
# column-major copies.
add('copy.109', 'f32[8,16]{0,1} copy(f32[8,16]{1,0} %Arg_4.5), ' + md('dot_general', T0 + 'dot_general', 21))
add('copy.110', 'f32[8,32]{0,1} copy(f32[8,32]{1,0} %maximum.16), ' + md('dot_general', T1 + 'dot_general', 23))
add('dot.107', 'f32[32,4]{1,0} dot(f32[8,32]{0,1} %copy.110, f32[8,4]{1,0} %add.70), lhs_contracting_dims={0}, rhs_contracting_dims={0}, ' + md('dot_general', T1 + 'dot_general', 23))
add('dot.108', 'f32[16,32]{1,0} dot(f32[8,16]{0,1} %copy.109, f32[8,32]{1,0} %select.83), lhs_contracting_dims={0}, rhs_contracting_dims={0}, ' + md('dot_general', T0 + 'dot_general', 21))
o = replace_in_order(o, 'dot.107', ['copy.110', 'dot.107'])
o = replace_in_order(o, 'dot.108', ['copy.109', 'dot.108'])
layout = module(o, ROOT1)
write('0005.layout-assignment.after_layout-assignment.before_pipeline-end', layout)
write('0006.fusion.after_pipeline-start.before_priority-fusion', layout)

# --- 0007 priority-fusion: elementwise chains become loop fusions, reductions input fusions.
def p(name, shape, i):
    return '  %%%s = %s parameter(%d)\n' % (name, shape, i)

FUSED = ''
FUSED += ('%fused_maximum (param_0.1: f32[8,32], param_1.2: f32[32]) -> f32[8,32] {\n'
          + p('param_0.1', 'f32[8,32]{1,0}', 0) + p('param_1.2', 'f32[32]{0}', 1) +
          '  %broadcast.114 = f32[8,32]{1,0} broadcast(f32[32]{0} %param_1.2), dimensions={1}, ' + md('add', D0 + 'add', 21) + '\n'
          '  %add.115 = f32[8,32]{1,0} add(f32[8,32]{1,0} %param_0.1, f32[8,32]{1,0} %broadcast.114), ' + md('add', D0 + 'add', 21) + '\n'
          '  %constant.116 = f32[] constant(0)\n'
          '  %broadcast.117 = f32[8,32]{1,0} broadcast(f32[] %constant.116), dimensions={}\n'
          '  ROOT %maximum.118 = f32[8,32]{1,0} maximum(f32[8,32]{1,0} %add.115, f32[8,32]{1,0} %broadcast.117), ' + md('max', 'jvp(mlp)/relu/max', 22) + '\n'
          '}\n\n')
FUSED += ('%fused_reduce (param_0.3: f32[8,4], param_1.4: f32[4]) -> f32[8] {\n'
          + p('param_0.3', 'f32[8,4]{1,0}', 0) + p('param_1.4', 'f32[4]{0}', 1) +
          '  %broadcast.119 = f32[8,4]{1,0} broadcast(f32[4]{0} %param_1.4), dimensions={1}, ' + md('add', D1 + 'add', 23) + '\n'
          '  %add.120 = f32[8,4]{1,0} add(f32[8,4]{1,0} %param_0.3, f32[8,4]{1,0} %broadcast.119), ' + md('add', D1 + 'add', 23) + '\n'
          '  %constant.121 = f32[] constant(-inf)\n'
          '  ROOT %reduce.122 = f32[8]{0} reduce(f32[8,4]{1,0} %add.120, f32[] %constant.121), dimensions={1}, to_apply=%region_0.23, ' + md('reduce_max', L + 'reduce_max', 31) + '\n'
          '}\n\n')
def logits_and_shift(pl, pb, pm, n):
    return ('  %%broadcast.%d = f32[8,4]{1,0} broadcast(f32[4]{0} %%%s), dimensions={1}, %s\n'
            '  %%add.%d = f32[8,4]{1,0} add(f32[8,4]{1,0} %%%s, f32[8,4]{1,0} %%broadcast.%d), %s\n'
            '  %%broadcast.%d = f32[8,4]{1,0} broadcast(f32[8]{0} %%%s), dimensions={0}, %s\n'
            '  %%subtract.%d = f32[8,4]{1,0} subtract(f32[8,4]{1,0} %%add.%d, f32[8,4]{1,0} %%broadcast.%d), %s\n'
            '  %%exponential.%d = f32[8,4]{1,0} exponential(f32[8,4]{1,0} %%subtract.%d), %s\n') % (
                n, pb, md('add', D1 + 'add', 23), n + 1, pl, n, md('add', D1 + 'add', 23),
                n + 2, pm, md('sub', L + 'sub', 31), n + 3, n + 1, n + 2, md('sub', L + 'sub', 31),
                n + 4, n + 3, md('exp', L + 'exp', 31))
FUSED += ('%fused_reduce.1 (param_0.5: f32[8,4], param_1.6: f32[4], param_2.7: f32[8]) -> f32[8] {\n'
          + p('param_0.5', 'f32[8,4]{1,0}', 0) + p('param_1.6', 'f32[4]{0}', 1) + p('param_2.7', 'f32[8]{0}', 2)
          + logits_and_shift('param_0.5', 'param_1.6', 'param_2.7', 123) +
          '  %constant.128 = f32[] constant(0)\n'
          '  ROOT %reduce.129 = f32[8]{0} reduce(f32[8,4]{1,0} %exponential.127, f32[] %constant.128), dimensions={1}, to_apply=%region_1.32, ' + md('reduce_sum', L + 'reduce_sum', 31) + '\n'
          '}\n\n')
def onehot(plabels, n):
    return ('  %%iota.%d = s32[8,4]{1,0} iota(), iota_dimension=1, %s\n'
            '  %%broadcast.%d = s32[8,4]{1,0} broadcast(s32[8]{0} %%%s), dimensions={0}, %s\n'
            '  %%compare.%d = pred[8,4]{1,0} compare(s32[8,4]{1,0} %%broadcast.%d, s32[8,4]{1,0} %%iota.%d), direction=EQ, %s\n'
            '  %%convert.%d = f32[8,4]{1,0} convert(pred[8,4]{1,0} %%compare.%d), %s\n') % (
                n, md('eq', L + 'eq', 32), n + 1, plabels, md('eq', L + 'eq', 32), n + 2, n + 1, n,
                md('eq', L + 'eq', 32), n + 3, n + 2, md('convert_element_type', L + 'convert_element_type', 32))
FUSED += ('%fused_reduce.2 (param_0.8: f32[8,4], param_1.9: f32[4], param_2.10: f32[8], param_3.11: f32[8], param_4.12: s32[8]) -> f32[] {\n'
          + p('param_0.8', 'f32[8,4]{1,0}', 0) + p('param_1.9', 'f32[4]{0}', 1) + p('param_2.10', 'f32[8]{0}', 2)
          + p('param_3.11', 'f32[8]{0}', 3) + p('param_4.12', 's32[8]{0}', 4)
          + onehot('param_4.12', 130)
          + logits_and_shift('param_0.8', 'param_1.9', 'param_2.10', 134).replace('  %exponential.138 = f32[8,4]{1,0} exponential(f32[8,4]{1,0} %subtract.137), ' + md('exp', L + 'exp', 31) + '\n', '') +
          '  %log.139 = f32[8]{0} log(f32[8]{0} %param_3.11), ' + md('log', L + 'log', 31) + '\n'
          '  %broadcast.140 = f32[8,4]{1,0} broadcast(f32[8]{0} %log.139), dimensions={0}, ' + md('sub', L + 'sub', 31) + '\n'
          '  %subtract.141 = f32[8,4]{1,0} subtract(f32[8,4]{1,0} %subtract.137, f32[8,4]{1,0} %broadcast.140), ' + md('sub', L + 'sub', 31) + '\n'
          '  %multiply.142 = f32[8,4]{1,0} multiply(f32[8,4]{1,0} %convert.133, f32[8,4]{1,0} %subtract.141), ' + md('mul', L + 'mul', 33) + '\n'
          '  %constant.143 = f32[] constant(0)\n'
          '  %reduce.144 = f32[] reduce(f32[8,4]{1,0} %multiply.142, f32[] %constant.143), dimensions={0,1}, to_apply=%region_2.46, ' + md('reduce_sum', L + 'reduce_sum', 33) + '\n'
          '  %negate.145 = f32[] negate(f32[] %reduce.144), ' + md('neg', L + 'neg', 33) + '\n'
          '  %constant.146 = f32[] constant(0.125)\n'
          '  ROOT %multiply.147 = f32[] multiply(f32[] %negate.145, f32[] %constant.146), ' + md('div', L + 'div', 33) + '\n'
          '}\n\n')
FUSED += ('%fused_reduce.3 (param_0.13: s32[8]) -> f32[8] {\n'
          + p('param_0.13', 's32[8]{0}', 0) + onehot('param_0.13', 148) +
          '  %constant.152 = f32[] constant(-0.125)\n'
          '  %broadcast.153 = f32[8,4]{1,0} broadcast(f32[] %constant.152), dimensions={}, ' + md('mul', TL + 'mul', 33) + '\n'
          '  %multiply.154 = f32[8,4]{1,0} multiply(f32[8,4]{1,0} %broadcast.153, f32[8,4]{1,0} %convert.151), ' + md('mul', TL + 'mul', 33) + '\n'
          '  %negate.155 = f32[8,4]{1,0} negate(f32[8,4]{1,0} %multiply.154), ' + md('neg', TL + 'neg', 31) + '\n'
          '  %constant.156 = f32[] constant(0)\n'
          '  ROOT %reduce.157 = f32[8]{0} reduce(f32[8,4]{1,0} %negate.155, f32[] %constant.156), dimensions={1}, to_apply=%region_3.62, ' + md('reduce_sum', TL + 'reduce_sum', 31) + '\n'
          '}\n\n')
FUSED += ('%fused_add (param_0.14: f32[8,4], param_1.15: f32[4], param_2.16: f32[8], param_3.17: f32[8], param_4.18: s32[8], param_5.19: f32[8]) -> f32[8,4] {\n'
          + p('param_0.14', 'f32[8,4]{1,0}', 0) + p('param_1.15', 'f32[4]{0}', 1) + p('param_2.16', 'f32[8]{0}', 2)
          + p('param_3.17', 'f32[8]{0}', 3) + p('param_4.18', 's32[8]{0}', 4) + p('param_5.19', 'f32[8]{0}', 5)
          + onehot('param_4.18', 158) +
          '  %constant.162 = f32[] constant(-0.125)\n'
          '  %broadcast.163 = f32[8,4]{1,0} broadcast(f32[] %constant.162), dimensions={}, ' + md('mul', TL + 'mul', 33) + '\n'
          '  %multiply.164 = f32[8,4]{1,0} multiply(f32[8,4]{1,0} %broadcast.163, f32[8,4]{1,0} %convert.161), ' + md('mul', TL + 'mul', 33) + '\n'
          '  %divide.165 = f32[8]{0} divide(f32[8]{0} %param_5.19, f32[8]{0} %param_3.17), ' + md('div', TL + 'div', 31) + '\n'
          '  %broadcast.166 = f32[8,4]{1,0} broadcast(f32[8]{0} %divide.165), dimensions={0}, ' + md('mul', TL + 'mul', 31) + '\n'
          + logits_and_shift('param_0.14', 'param_1.15', 'param_2.16', 167) +
          '  %multiply.172 = f32[8,4]{1,0} multiply(f32[8,4]{1,0} %broadcast.166, f32[8,4]{1,0} %exponential.171), ' + md('mul', TL + 'mul', 31) + '\n'
          '  ROOT %add.173 = f32[8,4]{1,0} add(f32[8,4]{1,0} %multiply.164, f32[8,4]{1,0} %multiply.172), ' + md('add_any', TL + 'add_any', 31) + '\n'
          '}\n\n')
def reduce_fusion(name, n, pname, pshape, dim, out, region, opn, line):
    return ('%%%s (%s: %s) -> %s {\n' % (name, pname, pshape.split('{')[0], out.split('{')[0])
            + p(pname, pshape, 0) +
            ('  %%constant.%d = f32[] constant(0)\n'
             '  ROOT %%reduce.%d = %s reduce(%s %%%s, f32[] %%constant.%d), dimensions={%d}, to_apply=%%%s, %s\n'
             '}\n\n') % (n, n + 1, out, pshape, pname, n, dim, region, md('reduce_sum', opn, line)))
FUSED += reduce_fusion('fused_reduce.4', 174, 'param_0.20', 'f32[8,4]{1,0}', 0, 'f32[4]{0}', 'region_4.72', T1 + 'reduce_sum', 23)
FUSED += ('%fused_select (param_0.21: f32[8,32], param_1.22: f32[32], param_2.23: f32[8,32]) -> f32[8,32] {\n'
          + p('param_0.21', 'f32[8,32]{1,0}', 0) + p('param_1.22', 'f32[32]{0}', 1) + p('param_2.23', 'f32[8,32]{1,0}', 2) +
          '  %broadcast.176 = f32[8,32]{1,0} broadcast(f32[32]{0} %param_1.22), dimensions={1}, ' + md('add', D0 + 'add', 21) + '\n'
          '  %add.177 = f32[8,32]{1,0} add(f32[8,32]{1,0} %param_0.21, f32[8,32]{1,0} %broadcast.176), ' + md('add', D0 + 'add', 21) + '\n'
          '  %constant.178 = f32[] constant(0)\n'
          '  %broadcast.179 = f32[8,32]{1,0} broadcast(f32[] %constant.178), dimensions={}\n'
          '  %compare.180 = pred[8,32]{1,0} compare(f32[8,32]{1,0} %add.177, f32[8,32]{1,0} %broadcast.179), direction=GT, ' + md('gt', 'transpose(jvp(mlp))/relu/gt', 22) + '\n'
          '  ROOT %select.181 = f32[8,32]{1,0} select(pred[8,32]{1,0} %compare.180, f32[8,32]{1,0} %param_2.23, f32[8,32]{1,0} %broadcast.179), ' + md('select_n', 'transpose(jvp(mlp))/relu/select_n', 22) + '\n'
          '}\n\n')
FUSED += reduce_fusion('fused_reduce.5', 182, 'param_0.24', 'f32[8,32]{1,0}', 0, 'f32[32]{0}', 'region_5.85', T0 + 'reduce_sum', 21)
def sgd_fusion(name, n, pw, plr, pg, shape):
    short = shape.split('{')[0]
    return ('%%%s (%s: %s, %s: f32[], %s: %s) -> %s {\n' % (name, pw, short, plr, pg, short, short)
            + p(pw, shape, 0) + p(plr, 'f32[]', 1) + p(pg, shape, 2) +
            ('  %%broadcast.%d = %s broadcast(f32[] %%%s), dimensions={}, %s\n'
             '  %%multiply.%d = %s multiply(%s %%broadcast.%d, %s %%%s), %s\n'
             '  ROOT %%subtract.%d = %s subtract(%s %%%s, %s %%multiply.%d), %s\n'
             '}\n\n') % (n, shape, plr, md('mul', U + 'mul', 41), n + 1, shape, shape, n, shape, pg,
                         md('mul', U + 'mul', 41), n + 2, shape, shape, pw, shape, n + 1, md('sub', U + 'sub', 41)))
FUSED += sgd_fusion('fused_subtract', 184, 'param_0.25', 'param_1.26', 'param_2.27', 'f32[4]{0}')
FUSED += sgd_fusion('fused_subtract.1', 187, 'param_0.28', 'param_1.29', 'param_2.30', 'f32[32,4]{1,0}')
FUSED += sgd_fusion('fused_subtract.2', 190, 'param_0.31', 'param_1.32', 'param_2.33', 'f32[32]{0}')
FUSED += sgd_fusion('fused_subtract.3', 193, 'param_0.34', 'param_1.35', 'param_2.36', 'f32[16,32]{1,0}')

F = {}
def fadd(name, text):
    F[name] = '%' + name + ' = ' + text
fadd('dot.8', I['dot.8'].split(' = ', 1)[1])
fadd('loop_maximum_fusion', 'f32[8,32]{1,0} fusion(f32[8,32]{1,0} %dot.8, f32[32]{0} %Arg_0.1), kind=kLoop, calls=%fused_maximum, ' + md('max', 'jvp(mlp)/relu/max', 22))
fadd('dot.17', 'f32[8,4]{1,0} dot(f32[8,32]{1,0} %loop_maximum_fusion, f32[32,4]{1,0} %Arg_3.4), lhs_contracting_dims={1}, rhs_contracting_dims={0}, ' + md('dot_general', D1 + 'dot_general', 23))
fadd('input_reduce_fusion', 'f32[8]{0} fusion(f32[8,4]{1,0} %dot.17, f32[4]{0} %Arg_1.2), kind=kInput, calls=%fused_reduce, ' + md('reduce_max', L + 'reduce_max', 31))
fadd('input_reduce_fusion.1', 'f32[8]{0} fusion(f32[8,4]{1,0} %dot.17, f32[4]{0} %Arg_1.2, f32[8]{0} %input_reduce_fusion), kind=kInput, calls=%fused_reduce.1, ' + md('reduce_sum', L + 'reduce_sum', 31))
fadd('input_reduce_fusion.2', 'f32[] fusion(f32[8,4]{1,0} %dot.17, f32[4]{0} %Arg_1.2, f32[8]{0} %input_reduce_fusion, f32[8]{0} %input_reduce_fusion.1, s32[8]{0} %Arg_5.6), kind=kInput, calls=%fused_reduce.2, ' + md('div', L + 'div', 33))
fadd('input_reduce_fusion.3', 'f32[8]{0} fusion(s32[8]{0} %Arg_5.6), kind=kInput, calls=%fused_reduce.3, ' + md('reduce_sum', TL + 'reduce_sum', 31))
fadd('loop_add_fusion', 'f32[8,4]{1,0} fusion(f32[8,4]{1,0} %dot.17, f32[4]{0} %Arg_1.2, f32[8]{0} %input_reduce_fusion, f32[8]{0} %input_reduce_fusion.1, s32[8]{0} %Arg_5.6, /*index=5*/f32[8]{0} %input_reduce_fusion.3), kind=kLoop, calls=%fused_add, ' + md('add_any', TL + 'add_any', 31))
fadd('input_reduce_fusion.4', 'f32[4]{0} fusion(f32[8,4]{1,0} %loop_add_fusion), kind=kInput, calls=%fused_reduce.4, ' + md('reduce_sum', T1 + 'reduce_sum', 23))
fadd('loop_subtract_fusion', 'f32[4]{0} fusion(f32[4]{0} %Arg_1.2, f32[] %Arg_6.7, f32[4]{0} %input_reduce_fusion.4), kind=kLoop, calls=%fused_subtract, ' + md('sub', U + 'sub', 41))
fadd('copy.110', 'f32[8,32]{0,1} copy(f32[8,32]{1,0} %loop_maximum_fusion), ' + md('dot_general', T1 + 'dot_general', 23))
fadd('dot.107', 'f32[32,4]{1,0} dot(f32[8,32]{0,1} %copy.110, f32[8,4]{1,0} %loop_add_fusion), lhs_contracting_dims={0}, rhs_contracting_dims={0}, ' + md('dot_general', T1 + 'dot_general', 23))
fadd('loop_subtract_fusion.1', 'f32[32,4]{1,0} fusion(f32[32,4]{1,0} %Arg_3.4, f32[] %Arg_6.7, f32[32,4]{1,0} %dot.107), kind=kLoop, calls=%fused_subtract.1, ' + md('sub', U + 'sub', 41))
fadd('dot.79', 'f32[8,32]{1,0} dot(f32[8,4]{1,0} %loop_add_fusion, f32[32,4]{1,0} %Arg_3.4), lhs_contracting_dims={1}, rhs_contracting_dims={1}, ' + md('dot_general', T1 + 'dot_general', 23))
fadd('loop_select_fusion', 'f32[8,32]{1,0} fusion(f32[8,32]{1,0} %dot.8, f32[32]{0} %Arg_0.1, f32[8,32]{1,0} %dot.79), kind=kLoop, calls=%fused_select, ' + md('select_n', 'transpose(jvp(mlp))/relu/select_n', 22))
fadd('input_reduce_fusion.5', 'f32[32]{0} fusion(f32[8,32]{1,0} %loop_select_fusion), kind=kInput, calls=%fused_reduce.5, ' + md('reduce_sum', T0 + 'reduce_sum', 21))
fadd('loop_subtract_fusion.2', 'f32[32]{0} fusion(f32[32]{0} %Arg_0.1, f32[] %Arg_6.7, f32[32]{0} %input_reduce_fusion.5), kind=kLoop, calls=%fused_subtract.2, ' + md('sub', U + 'sub', 41))
fadd('copy.109', I['copy.109'].split(' = ', 1)[1])
fadd('dot.108', 'f32[16,32]{1,0} dot(f32[8,16]{0,1} %copy.109, f32[8,32]{1,0} %loop_select_fusion), lhs_contracting_dims={0}, rhs_contracting_dims={0}, ' + md('dot_general', T0 + 'dot_general', 21))
fadd('loop_subtract_fusion.3', 'f32[16,32]{1,0} fusion(f32[16,32]{1,0} %Arg_2.3, f32[] %Arg_6.7, f32[16,32]{1,0} %dot.108), kind=kLoop, calls=%fused_subtract.3, ' + md('sub', U + 'sub', 41))

def fused_module(root, extra=(), scheduled=False):
    names = list(F.keys())
    body = '\n'.join('  ' + F[n] for n in names) + ''.join('\n  ' + e for e in extra)
    return (header(scheduled) + '\n' + REGIONS + FUSED + ENTRY_SIG + '\n'.join('  ' + p for p in PARAMS) +
            '\n' + body + '\n  ' + root + '\n}\n\n')

ROOTF = tuple_line('input_reduce_fusion.2', 'loop_subtract_fusion.2', 'loop_subtract_fusion', 'loop_subtract_fusion.3', 'loop_subtract_fusion.1', 'Arg_6.7')
fused = fused_module(ROOTF)
write('0007.fusion.after_priority-fusion.before_multi_output_fusion', fused)
write('0008.fusion.after_multi_output_fusion.before_pipeline-end', fused)
write('0009.copy-insertion.after_pipeline-start.before_copy-insertion', fused)

# --- 0010 copy-insertion: the learning rate is both a parameter and an output, so the output
# gets its own buffer.
COPY = '%copy.196 = f32[] copy(f32[] %Arg_6.7), metadata={op_name="opt_state.learning_rate"}'
ROOTC = tuple_line('input_reduce_fusion.2', 'loop_subtract_fusion.2', 'loop_subtract_fusion', 'loop_subtract_fusion.3', 'loop_subtract_fusion.1', 'copy.196')
write('0010.copy-insertion.after_copy-insertion.before_pipeline-end', fused_module(ROOTC, [COPY]))
write('after_optimizations', fused_module(ROOTC, [COPY], scheduled=True))


# --- A second, small module: the evaluation step (argmax accuracy), before and after only.
A = 'module_0002.jit_accuracy'
def amd(op_type, op_name, line):
    return ('metadata={op_type="%s" op_name="jit(accuracy)/jit(main)/%s" '
            'source_file="/home/user/mlp/train.py" source_line=%d}' % (op_type, op_name, line))
ACC_HEADER = ('HloModule jit_accuracy, entry_computation_layout={(f32[32]{0}, f32[4]{0}, f32[16,32]{1,0}, '
              'f32[32,4]{1,0}, f32[8,16]{1,0}, /*index=5*/s32[8]{0})->f32[]}\n\n')
ARGMAX = ('%region_0.14 (Arg_0.15: f32[], Arg_1.16: s32[], Arg_2.17: f32[], Arg_3.18: s32[]) -> (f32[], s32[]) {\n'
          '  %Arg_0.15 = f32[] parameter(0)\n'
          '  %Arg_1.16 = s32[] parameter(1)\n'
          '  %Arg_2.17 = f32[] parameter(2)\n'
          '  %Arg_3.18 = s32[] parameter(3)\n'
          '  %compare.19 = pred[] compare(f32[] %Arg_0.15, f32[] %Arg_2.17), direction=GT, ' + amd('argmax', 'argmax', 47) + '\n'
          '  %compare.20 = pred[] compare(f32[] %Arg_0.15, f32[] %Arg_0.15), direction=NE, ' + amd('argmax', 'argmax', 47) + '\n'
          '  %or.21 = pred[] or(pred[] %compare.19, pred[] %compare.20), ' + amd('argmax', 'argmax', 47) + '\n'
          '  %compare.22 = pred[] compare(f32[] %Arg_0.15, f32[] %Arg_2.17), direction=EQ, ' + amd('argmax', 'argmax', 47) + '\n'
          '  %compare.23 = pred[] compare(s32[] %Arg_1.16, s32[] %Arg_3.18), direction=LT, ' + amd('argmax', 'argmax', 47) + '\n'
          '  %and.24 = pred[] and(pred[] %compare.22, pred[] %compare.23), ' + amd('argmax', 'argmax', 47) + '\n'
          '  %or.25 = pred[] or(pred[] %or.21, pred[] %and.24), ' + amd('argmax', 'argmax', 47) + '\n'
          '  %select.26 = f32[] select(pred[] %or.25, f32[] %Arg_0.15, f32[] %Arg_2.17), ' + amd('argmax', 'argmax', 47) + '\n'
          '  %select.27 = s32[] select(pred[] %or.25, s32[] %Arg_1.16, s32[] %Arg_3.18), ' + amd('argmax', 'argmax', 47) + '\n'
          '  ROOT %tuple.28 = (f32[], s32[]) tuple(f32[] %select.26, s32[] %select.27)\n'
          '}\n\n'
          '%region_1.40 (Arg_0.41: f32[], Arg_1.42: f32[]) -> f32[] {\n'
          '  %Arg_0.41 = f32[] parameter(0)\n'
          '  %Arg_1.42 = f32[] parameter(1)\n'
          '  ROOT %add.43 = f32[] add(f32[] %Arg_0.41, f32[] %Arg_1.42), ' + amd('reduce_sum', 'reduce_sum', 48) + '\n'
          '}\n\n')
ACC_SIG = ('ENTRY %main.47 (Arg_0.1: f32[32], Arg_1.2: f32[4], Arg_2.3: f32[16,32], Arg_3.4: f32[32,4], '
           'Arg_4.5: f32[8,16], Arg_5.6: s32[8]) -> f32[] {\n') + ''.join('  ' + p_ + '\n' for p_ in PARAMS[:6])
acc_before = ACC_HEADER + ARGMAX + ACC_SIG + '\n'.join('  ' + l for l in [
    '%dot.7 = f32[8,32]{1,0} dot(f32[8,16]{1,0} %Arg_4.5, f32[16,32]{1,0} %Arg_2.3), lhs_contracting_dims={1}, rhs_contracting_dims={0}, ' + amd('dot_general', 'mlp/dense_0/dot_general', 21),
    '%broadcast.8 = f32[8,32]{1,0} broadcast(f32[32]{0} %Arg_0.1), dimensions={1}, ' + amd('add', 'mlp/dense_0/add', 21),
    '%add.9 = f32[8,32]{1,0} add(f32[8,32]{1,0} %dot.7, f32[8,32]{1,0} %broadcast.8), ' + amd('add', 'mlp/dense_0/add', 21),
    '%constant.10 = f32[] constant(0)',
    '%broadcast.11 = f32[8,32]{1,0} broadcast(f32[] %constant.10), dimensions={}',
    '%maximum.12 = f32[8,32]{1,0} maximum(f32[8,32]{1,0} %add.9, f32[8,32]{1,0} %broadcast.11), ' + amd('max', 'mlp/relu/max', 22),
    '%dot.13 = f32[8,4]{1,0} dot(f32[8,32]{1,0} %maximum.12, f32[32,4]{1,0} %Arg_3.4), lhs_contracting_dims={1}, rhs_contracting_dims={0}, ' + amd('dot_general', 'mlp/dense_1/dot_general', 23),
    '%broadcast.29 = f32[8,4]{1,0} broadcast(f32[4]{0} %Arg_1.2), dimensions={1}, ' + amd('add', 'mlp/dense_1/add', 23),
    '%add.30 = f32[8,4]{1,0} add(f32[8,4]{1,0} %dot.13, f32[8,4]{1,0} %broadcast.29), ' + amd('add', 'mlp/dense_1/add', 23),
    '%iota.31 = s32[8,4]{1,0} iota(), iota_dimension=1, ' + amd('argmax', 'argmax', 47),
    '%constant.32 = f32[] constant(-inf)',
    '%constant.33 = s32[] constant(0)',
    '%reduce.34 = (f32[8]{0}, s32[8]{0}) reduce(f32[8,4]{1,0} %add.30, s32[8,4]{1,0} %iota.31, f32[] %constant.32, s32[] %constant.33), dimensions={1}, to_apply=%region_0.14, ' + amd('argmax', 'argmax', 47),
    '%get-tuple-element.35 = s32[8]{0} get-tuple-element((f32[8]{0}, s32[8]{0}) %reduce.34), index=1, ' + amd('argmax', 'argmax', 47),
    '%compare.36 = pred[8]{0} compare(s32[8]{0} %get-tuple-element.35, s32[8]{0} %Arg_5.6), direction=EQ, ' + amd('eq', 'eq', 48),
    '%convert.37 = f32[8]{0} convert(pred[8]{0} %compare.36), ' + amd('convert_element_type', 'convert_element_type', 48),
    '%constant.38 = f32[] constant(0)',
    '%reduce.44 = f32[] reduce(f32[8]{0} %convert.37, f32[] %constant.38), dimensions={0}, to_apply=%region_1.40, ' + amd('reduce_sum', 'reduce_sum', 48),
    '%constant.45 = f32[] constant(8)',
    'ROOT %divide.46 = f32[] divide(f32[] %reduce.44, f32[] %constant.45), ' + amd('div', 'div', 48),
]) + '\n}\n\n'
acc_fused = (
    '%fused_maximum (param_0.1: f32[8,32], param_1.2: f32[32]) -> f32[8,32] {\n'
    '  %param_0.1 = f32[8,32]{1,0} parameter(0)\n'
    '  %param_1.2 = f32[32]{0} parameter(1)\n'
    '  %broadcast.48 = f32[8,32]{1,0} broadcast(f32[32]{0} %param_1.2), dimensions={1}, ' + amd('add', 'mlp/dense_0/add', 21) + '\n'
    '  %add.49 = f32[8,32]{1,0} add(f32[8,32]{1,0} %param_0.1, f32[8,32]{1,0} %broadcast.48), ' + amd('add', 'mlp/dense_0/add', 21) + '\n'
    '  %constant.50 = f32[] constant(0)\n'
    '  %broadcast.51 = f32[8,32]{1,0} broadcast(f32[] %constant.50), dimensions={}\n'
    '  ROOT %maximum.52 = f32[8,32]{1,0} maximum(f32[8,32]{1,0} %add.49, f32[8,32]{1,0} %broadcast.51), ' + amd('max', 'mlp/relu/max', 22) + '\n'
    '}\n\n'
    '%fused_reduce (param_0.3: f32[8,4], param_1.4: f32[4]) -> (f32[8], s32[8]) {\n'
    '  %param_0.3 = f32[8,4]{1,0} parameter(0)\n'
    '  %param_1.4 = f32[4]{0} parameter(1)\n'
    '  %broadcast.53 = f32[8,4]{1,0} broadcast(f32[4]{0} %param_1.4), dimensions={1}, ' + amd('add', 'mlp/dense_1/add', 23) + '\n'
    '  %add.54 = f32[8,4]{1,0} add(f32[8,4]{1,0} %param_0.3, f32[8,4]{1,0} %broadcast.53), ' + amd('add', 'mlp/dense_1/add', 23) + '\n'
    '  %iota.55 = s32[8,4]{1,0} iota(), iota_dimension=1, ' + amd('argmax', 'argmax', 47) + '\n'
    '  %constant.56 = f32[] constant(-inf)\n'
    '  %constant.57 = s32[] constant(0)\n'
    '  ROOT %reduce.58 = (f32[8]{0}, s32[8]{0}) reduce(f32[8,4]{1,0} %add.54, s32[8,4]{1,0} %iota.55, f32[] %constant.56, s32[] %constant.57), dimensions={1}, to_apply=%region_0.14, ' + amd('argmax', 'argmax', 47) + '\n'
    '}\n\n'
    '%fused_reduce.1 (param_0.5: s32[8], param_1.6: s32[8]) -> f32[] {\n'
    '  %param_0.5 = s32[8]{0} parameter(0)\n'
    '  %param_1.6 = s32[8]{0} parameter(1)\n'
    '  %compare.59 = pred[8]{0} compare(s32[8]{0} %param_0.5, s32[8]{0} %param_1.6), direction=EQ, ' + amd('eq', 'eq', 48) + '\n'
    '  %convert.60 = f32[8]{0} convert(pred[8]{0} %compare.59), ' + amd('convert_element_type', 'convert_element_type', 48) + '\n'
    '  %constant.61 = f32[] constant(0)\n'
    '  %reduce.62 = f32[] reduce(f32[8]{0} %convert.60, f32[] %constant.61), dimensions={0}, to_apply=%region_1.40, ' + amd('reduce_sum', 'reduce_sum', 48) + '\n'
    '  %constant.63 = f32[] constant(0.125)\n'
    '  ROOT %multiply.64 = f32[] multiply(f32[] %reduce.62, f32[] %constant.63), ' + amd('div', 'div', 48) + '\n'
    '}\n\n')
acc_after = (ACC_HEADER.replace('HloModule jit_accuracy, ', 'HloModule jit_accuracy, is_scheduled=true, ') + ARGMAX +
             acc_fused + ACC_SIG + '\n'.join('  ' + l for l in [
    '%dot.7 = f32[8,32]{1,0} dot(f32[8,16]{1,0} %Arg_4.5, f32[16,32]{1,0} %Arg_2.3), lhs_contracting_dims={1}, rhs_contracting_dims={0}, ' + amd('dot_general', 'mlp/dense_0/dot_general', 21),
    '%loop_maximum_fusion = f32[8,32]{1,0} fusion(f32[8,32]{1,0} %dot.7, f32[32]{0} %Arg_0.1), kind=kLoop, calls=%fused_maximum, ' + amd('max', 'mlp/relu/max', 22),
    '%dot.13 = f32[8,4]{1,0} dot(f32[8,32]{1,0} %loop_maximum_fusion, f32[32,4]{1,0} %Arg_3.4), lhs_contracting_dims={1}, rhs_contracting_dims={0}, ' + amd('dot_general', 'mlp/dense_1/dot_general', 23),
    '%input_reduce_fusion = (f32[8]{0}, s32[8]{0}) fusion(f32[8,4]{1,0} %dot.13, f32[4]{0} %Arg_1.2), kind=kInput, calls=%fused_reduce, ' + amd('argmax', 'argmax', 47),
    '%get-tuple-element.35 = s32[8]{0} get-tuple-element((f32[8]{0}, s32[8]{0}) %input_reduce_fusion), index=1, ' + amd('argmax', 'argmax', 47),
    'ROOT %input_reduce_fusion.1 = f32[] fusion(s32[8]{0} %get-tuple-element.35, s32[8]{0} %Arg_5.6), kind=kInput, calls=%fused_reduce.1, ' + amd('div', 'div', 48),
]) + '\n}\n\n')
with open(os.path.join(out, A + '.before_optimizations.txt'), 'w') as f:
    f.write(acc_before)
with open(os.path.join(out, A + '.after_optimizations.txt'), 'w') as f:
    f.write(acc_after)


# --- Buffer assignment of the optimized train step (what XLA writes next to
# after_optimizations.txt: allocations, then the live ranges).
def shape_bytes(shape):
    if shape.startswith('('):
        return 8 * (shape.count(',') - shape.count('{') + 1) if shape != '()' else 0
    dims = re.match(r'\w+\[([^\]]*)\]', shape).group(1)
    n = 1
    for d in dims.split(','):
        if d:
            n *= int(d)
    return n * (1 if shape.startswith('pred') else 4)

entry_text = open(os.path.join(out, P + '.after_optimizations.txt')).read().split('ENTRY ', 1)[1]
entry = []  # (name, shape)
entry_lines = {}  # name -> the instruction as written (for "from instruction:")
for line in entry_text.split('\n')[1:]:
    m = re.match(r'\s+(?:ROOT )?%([\w.\-]+) = (\([^=]*?\)|\S+) ', line)
    if m:
        entry.append((m.group(1), m.group(2)))
        entry_lines[m.group(1)] = line.strip().replace('ROOT ', '', 1)
aliases = {'loop_subtract_fusion.2': 0, 'loop_subtract_fusion': 1, 'loop_subtract_fusion.3': 2,
           'loop_subtract_fusion.1': 3}
ba = ['BufferAssignment:']
alloc = 0
value_id = 0
for i, (name, shape) in enumerate(entry[:7]):
    size = shape_bytes(shape)
    live = ', maybe-live-out' if i < 4 else ''
    ba.append('allocation %d: size %d, parameter %d, shape |%s| at ShapeIndex {}%s:' %
              (alloc, size, i, shape.split('{')[0], live))
    ba.append(' value: <%d %s @0> (size=%d,offset=0): %s' % (value_id, name, size, shape))
    value_id += 1
    for out_name, param in aliases.items():
        if param == i:
            ba.append(' value: <%d %s @0> (size=%d,offset=0): %s' % (value_id, out_name, size, shape))
            value_id += 1
    alloc += 1
for name, shape in entry:
    if name in ('input_reduce_fusion.2', 'copy.196'):
        ba.append('allocation %d: size 4, maybe-live-out:' % alloc)
        ba.append(' value: <%d %s @0> (size=4,offset=0): f32[]' % (value_id, name))
        value_id += 1
        alloc += 1
ba.append('allocation %d: size 48, output shape is |(f32[], f32[32], f32[4], f32[16,32], f32[32,4], f32[])|, '
          'maybe-live-out:' % alloc)
ba.append(' value: <%d tuple.104{} @0> (size=48,offset=0): %s' % (value_id, TUPLE_T))
value_id += 1
alloc += 1
temps = [(n, s) for n, s in entry[7:] if n not in aliases and n not in ('input_reduce_fusion.2', 'copy.196', 'tuple.104')]
offset = 0
temp_lines = []
for name, shape in temps:
    size = shape_bytes(shape)
    temp_lines.append(' value: <%d %s @0> (size=%d,offset=%d): %s' % (value_id, name, size, offset, shape))
    value_id += 1
    offset += (size + 63) // 64 * 64
ba.append('allocation %d: size %d, preallocated-temp:' % (alloc, offset))
ba += temp_lines
total = offset + sum(shape_bytes(s) for _, s in entry[:7]) + 8 + 48
ba += ['', 'Total bytes used: %d (%.2fKiB)' % (total, total / 1024.0), '',
       'Used values:']
# Each used value as XLA writes it: id, name and colour, positions, uses, and the defining
# instruction's text.
value_ids = {}
for line in ba:
    m = re.match(r' value: <(\d+) ([\w.\-]+)(?:\{\})? @0>', line)
    if m:
        value_ids.setdefault(m.group(2), int(m.group(1)))
for name, shape in entry:
    if name not in value_ids:
        value_ids[name] = value_id
        value_id += 1
    ba.append('<%d %s @0>' % (value_ids[name], name))
    ba.append(' positions:')
    ba.append('  %s' % name)
    ba.append(' uses:')
    ba.append(' from instruction: %s' % entry_lines[name])
ba += ['', 'HloLiveRange (max %d):' % (len(entry) - 1), '  InstructionSequence:']
ba += ['    %d:%s' % (i, n) for i, (n, _) in enumerate(entry)]
ba += ['  BufferLiveRange:']
ranges = []  # (name, start, end, bytes)
for i, (name, shape) in enumerate(entry):
    end = len(entry) - 1 if i < 7 or name in aliases else min(i + 3, len(entry) - 1)
    ranges.append((name, i, end, shape_bytes(shape)))
    ba.append('    %s{}:%d-%d' % (name, i, end))
# The peak as XLA picks it: a value counts from its start to one past its end; the first point
# where the running sum reaches a new maximum.
peak_t, peak_bytes = 0, -1
for t in range(len(entry) + 1):
    live = sum(b for _, start, end, b in ranges if start <= t <= end)
    if live > peak_bytes:
        peak_t, peak_bytes = t, live
ba.append('  Live ranges at %d (peak):' % peak_t)
for name, start, end, b in ranges:
    if start <= peak_t <= end:
        ba.append('    %s: %d bytes' % (name, b))
with open(os.path.join(out, P + '.after_optimizations-buffer-assignment.txt'), 'w') as f:
    f.write('\n'.join(ba) + '\n')


# --- The snapshot: arguments made here, the result computed by `hlowb replay`.
def run(*args):
    return subprocess.run([HLOWB] + list(args), check=True, capture_output=True, text=True).stdout

def rng(seed):
    s = seed
    while True:
        s = (s * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        yield ((s >> 33) / float(1 << 31)) * 2 - 1

def literal(dims, layout, values, kind='f32s'):
    t = 'arguments {\n  shape {\n    element_type: %s\n' % ('F32' if kind == 'f32s' else 'S32')
    t += ''.join('    dimensions: %d\n' % d for d in dims)
    t += '    layout {\n' + ''.join('      minor_to_major: %d\n' % m for m in layout) + '    }\n  }\n'
    t += ''.join('  %s: %s\n' % (kind, ('%.4f' % v) if kind == 'f32s' else v) for v in values)
    return t + '}\n'

tmp = tempfile.mkdtemp()
try:
    r = rng(20240611)
    arguments = (literal([32], [0], [0.01 * next(r) for _ in range(32)]) +
                 literal([4], [0], [0.01 * next(r) for _ in range(4)]) +
                 literal([16, 32], [1, 0], [0.25 * next(r) for _ in range(16 * 32)]) +
                 literal([32, 4], [1, 0], [0.18 * next(r) for _ in range(32 * 4)]) +
                 literal([8, 16], [1, 0], [next(r) for _ in range(8 * 16)]) +
                 literal([8], [0], [int((next(r) + 1) * 2) % 4 for _ in range(8)], 's32s') +
                 literal([], [], [0.05]))
    after = os.path.join(out, P + '.after_optimizations.txt')
    run('convert', after, '-o', os.path.join(tmp, 'module.pbtxt'), '--format=pbtxt')
    module_text = open(os.path.join(tmp, 'module.pbtxt')).read().rstrip('\n')
    hlo = 'hlo {\n' + ''.join('  ' + l + '\n' for l in module_text.split('\n')) + '}\n'
    open(os.path.join(tmp, 'args.pbtxt'), 'w').write(hlo + arguments + 'execution_platform: "CUDA"\n')
    run('replay', os.path.join(tmp, 'args.pbtxt'),
        '--output_literals_file=' + os.path.join(tmp, 'literals.pbtxt'))
    lines = open(os.path.join(tmp, 'literals.pbtxt')).read().split('\n')
    start = lines.index('  result {')
    depth, result = 0, []
    for l in lines[start:]:
        result.append(l[2:])
        depth += l.count('{') - l.count('}')
        if depth == 0:
            break
    open(os.path.join(tmp, 'snapshot.pbtxt'), 'w').write(
        hlo + arguments + '\n'.join(result) + '\nexecution_platform: "CUDA"\n')
    run('convert', os.path.join(tmp, 'snapshot.pbtxt'), '--format=snapshot', '-o',
        os.path.join(out, '%s.%s.execution_0000.hlo_snapshot.pb' % (TIMESTAMP, P)))
    # The unoptimized module must compute what the optimized one did.
    print(run('replay', os.path.join(out, P + '.before_optimizations.txt'),
              '--input_literals_file=' + os.path.join(tmp, 'literals.pbtxt')).strip().split('\n')[-1])
finally:
    shutil.rmtree(tmp)

for name in sorted(os.listdir(out)):
    if name.endswith('.txt') and 'buffer-assignment' not in name:
        run('verify', os.path.join(out, name))
print('wrote', out)
