#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gen.py - the Fortran binding of the MPI shim, generated from two tables.

  gen.py predef HANDLES OUT.h
      the C table of the predefined handles (lib/mpi_shim/fortran_handles.c)
  gen.py binding CALLS HANDLES MPI_H OUT.c MPIF_H MPI_F90 SIZEOF_F90 KINDS
      the C wrappers mpi_name_/pmpi_name_ (OUT.c), mpif.h, the source of
      the mpi module, and the Fortran subroutines behind its generic
      MPI_SIZEOF (SIZEOF_F90), one per type and kind of KINDS, which says
      the kinds the compiler has: "integer:1,2,4,8 real:4,8 ..."
  gen.py coverage CALLS MPI_H
      the C calls of mpi.h that have no line in CALLS and are not in the
      lists of the calls without a Fortran binding (NOT_BOUND, below), and
      those lists' stale names (exit 1 if any)

calls.txt says how each argument crosses between the languages (its header
lists the kinds); handles.txt numbers the predefined handles.  The integer
constants of mpif.h and of the module are the #defines of mpi.h.
"""
import re
import sys

HANDLE_KINDS = {
    # kind: (C type, index in the C table of fortran_handles.c)
    'comm': ('MPI_Comm', 'MPI_SHIM_F_COMM'),
    'group': ('MPI_Group', 'MPI_SHIM_F_GROUP'),
    'type': ('MPI_Datatype', 'MPI_SHIM_F_TYPE'),
    'op': ('MPI_Op', 'MPI_SHIM_F_OP'),
    'request': ('MPI_Request', 'MPI_SHIM_F_REQUEST'),
    'errhandler': ('MPI_Errhandler', 'MPI_SHIM_F_ERRHANDLER'),
    'info': ('MPI_Info', 'MPI_SHIM_F_INFO'),
    'message': ('MPI_Message', 'MPI_SHIM_F_MESSAGE'),
    'win': ('MPI_Win', 'MPI_SHIM_F_WIN'),
    'file': ('MPI_File', 'MPI_SHIM_F_FILE'),
}
SCALAR_KINDS = {'int', 'bool', 'aint', 'count', 'off', 'iaint', 'buf', 'addr', 'aptr',
                'aval', 'ival', 'status', 'index', 'str', 'istr', 'opfn', 'errfn', 'werrfn',
                'ferrfn', 'copyfn', 'delfn', 'grqfn', 'convfn', 'extentfn'}
ARRAY_KINDS = {'int', 'bool', 'aint', 'iaint', 'status', 'indices', 'str',
               'weights', 'argv', 'errcodes'} | set(HANDLE_KINDS)
FN_KINDS = ('opfn', 'errfn', 'werrfn', 'ferrfn', 'copyfn', 'delfn', 'grqfn', 'convfn',
            'extentfn')

# Calls of mpi.h that the binding leaves out on purpose, by name, each
# list with its reason; "gen.py coverage" prints them, and fails on a name
# here that mpi.h does not have or that calls.txt binds all the same.
# The handle conversions are C functions: the standard gives them no
# Fortran binding (MPI-3.1 17.2.4).
C_ONLY = [
    'Comm_c2f', 'Comm_f2c', 'Errhandler_c2f', 'Errhandler_f2c', 'Group_c2f', 'Group_f2c',
    'Info_c2f', 'Info_f2c', 'Message_c2f', 'Message_f2c', 'Op_c2f', 'Op_f2c', 'Request_c2f',
    'Request_f2c', 'Status_c2f', 'Status_f2c', 'Type_c2f', 'Type_f2c', 'Win_c2f', 'Win_f2c',
    'File_c2f', 'File_f2c',
]
# The large-count "_c" calls (MPI-4.0 19.1): in Fortran they exist only in
# the mpi_f08 module, as overloads of the call without "_c" (an
# INTEGER(KIND=MPI_COUNT_KIND) count picks them); the mpi module and
# mpif.h have no "_c" names.  Each one's call without "_c" must be bound.
F08_ONLY = [
    'Get_count_c', 'Get_elements_c', 'Pack_c', 'Pack_external_c', 'Pack_external_size_c',
    'Pack_size_c', 'Type_contiguous_c', 'Type_create_darray_c', 'Type_create_hindexed_block_c',
    'Type_create_hindexed_c', 'Type_create_hvector_c', 'Type_create_indexed_block_c',
    'Type_create_resized_c', 'Type_create_struct_c', 'Type_create_subarray_c',
    'Type_get_contents_c', 'Type_get_envelope_c', 'Type_get_extent_c',
    'Type_get_true_extent_c', 'Type_indexed_c', 'Type_size_c', 'Type_vector_c', 'Unpack_c',
    'Unpack_external_c',
    'Send_c', 'Bsend_c', 'Ssend_c', 'Rsend_c', 'Isend_c', 'Ibsend_c', 'Issend_c', 'Irsend_c',
    'Send_init_c', 'Bsend_init_c', 'Ssend_init_c', 'Rsend_init_c', 'Recv_c', 'Irecv_c',
    'Recv_init_c', 'Mrecv_c', 'Imrecv_c', 'Sendrecv_c', 'Sendrecv_replace_c', 'Isendrecv_c',
    'Isendrecv_replace_c', 'Buffer_attach_c', 'Buffer_detach_c', 'Status_set_elements_c',
    'Bcast_c', 'Gather_c', 'Gatherv_c', 'Scatter_c', 'Scatterv_c', 'Allgather_c',
    'Allgatherv_c', 'Alltoall_c', 'Alltoallv_c', 'Alltoallw_c', 'Reduce_c', 'Allreduce_c',
    'Reduce_scatter_c', 'Reduce_scatter_block_c', 'Scan_c', 'Exscan_c', 'Ibcast_c',
    'Igather_c', 'Igatherv_c', 'Iscatter_c', 'Iscatterv_c', 'Iallgather_c', 'Iallgatherv_c',
    'Ialltoall_c', 'Ialltoallv_c', 'Ialltoallw_c', 'Ireduce_c', 'Iallreduce_c',
    'Ireduce_scatter_c', 'Ireduce_scatter_block_c', 'Iscan_c', 'Iexscan_c', 'Reduce_local_c',
    'Op_create_c', 'Bcast_init_c', 'Gather_init_c', 'Gatherv_init_c', 'Scatter_init_c',
    'Scatterv_init_c', 'Allgather_init_c', 'Allgatherv_init_c', 'Alltoall_init_c',
    'Alltoallv_init_c', 'Alltoallw_init_c', 'Reduce_init_c', 'Allreduce_init_c',
    'Reduce_scatter_init_c', 'Reduce_scatter_block_init_c', 'Scan_init_c', 'Exscan_init_c',
]
# The tools information interface has only C bindings (MPI-3.1 14.3).
TOOLS_C_ONLY = [
    'T_init_thread', 'T_finalize', 'T_enum_get_info', 'T_enum_get_item', 'T_cvar_get_num',
    'T_cvar_get_info', 'T_cvar_get_index', 'T_cvar_handle_alloc', 'T_cvar_handle_free',
    'T_cvar_read', 'T_cvar_write', 'T_pvar_get_num', 'T_pvar_get_info', 'T_pvar_get_index',
    'T_pvar_session_create', 'T_pvar_session_free', 'T_pvar_handle_alloc',
    'T_pvar_handle_free', 'T_pvar_start', 'T_pvar_stop', 'T_pvar_read', 'T_pvar_write',
    'T_pvar_reset', 'T_pvar_readreset', 'T_category_get_num', 'T_category_get_info',
    'T_category_get_index', 'T_category_get_cvars', 'T_category_get_pvars',
    'T_category_get_categories', 'T_category_changed',
]
NOT_BOUND = dict([(n, 'handle conversion, C only') for n in C_ONLY] +
                 [(n, 'tools information interface, C only') for n in TOOLS_C_ONLY] +
                 [(n, 'large-count call: an mpi_f08 overload only') for n in F08_ONLY])


def die(msg):
    sys.stderr.write('gen.py: %s\n' % msg)
    sys.exit(1)


class Arg:
    def __init__(self, call, text):
        words = text.split()
        self.dir = 'in'
        if words and words[0] in ('out', 'inout'):
            self.dir = words.pop(0)
        if len(words) != 2:
            die('%s: cannot read argument "%s"' % (call, text))
        kind, self.name = words
        m = re.match(r'^(\w+)(?:\[([\w@<>]*)\])?$', kind)
        if not m:
            die('%s: bad kind "%s"' % (call, kind))
        self.kind, self.dim = m.group(1), m.group(2)
        self.array = self.dim is not None
        if self.array and self.kind not in ARRAY_KINDS:
            die('%s: %s cannot be an array' % (call, self.kind))
        if not self.array and self.kind not in SCALAR_KINDS | set(HANDLE_KINDS):
            die('%s: unknown kind "%s"' % (call, self.kind))


# What a function (a call without ierror) returns: its C type, its Fortran type.
RETURNS = {
    'double': ('double', 'double precision'),
    'aint': ('MPI_Aint', 'integer(kind=MPI_ADDRESS_KIND)'),
}


class Call:
    def __init__(self, line):
        m = re.match(r'^(\w+)\((.*)\)\s*(?:->\s*(\w+))?\s*(manual)?\s*$', line)
        if not m:
            die('cannot read line "%s"' % line)
        self.name = m.group(1)
        self.args = [Arg(self.name, a) for a in m.group(2).split(',') if a.strip()]
        self.returns = m.group(3)
        self.manual = bool(m.group(4))
        if self.returns and self.returns not in RETURNS:
            die('%s: cannot return "%s"' % (self.name, self.returns))
        # A function's arguments are input values of the address kind.
        if self.returns and any(a.kind != 'aint' or a.array or a.dir != 'in'
                                for a in self.args):
            die('%s: a function takes only input aint arguments' % self.name)
        names = [a.name for a in self.args]
        for a in self.args:
            if a.array and a.dim and a.dim[0] not in '@<>' and a.kind != 'str' \
                    and a.dim not in names:
                die('%s: %s has length %s, not an argument' % (self.name, a.name, a.dim))
            if a.array and a.dim and a.dim[0] in '@<>' and a.dim[1:] not in names:
                die('%s: %s has length %s, not an argument' % (self.name, a.name, a.dim))
            if a.array and a.kind in set(HANDLE_KINDS) | {'status', 'indices', 'iaint'} and not a.dim:
                die('%s: %s needs a length' % (self.name, a.name))
            if a.array and a.kind == 'bool' and a.dir != 'in' and not a.dim:
                die('%s: %s needs a length' % (self.name, a.name))
            if a.kind == 'str' and a.dir != 'in' and not a.dim:
                die('%s: output string %s needs its size' % (self.name, a.name))
            if a.kind == 'argv' and (a.dir != 'in' or not a.array):
                die('%s: %s: argv is an input array' % (self.name, a.name))
            if a.kind == 'errcodes' and (a.dir != 'out' or a.dim):
                die('%s: %s: errcodes[] is an output array' % (self.name, a.name))


def read_table(path):
    out = []
    with open(path) as f:
        for line in f:
            line = line.split('#', 1)[0].strip()
            if line:
                out.append(line)
    return out


def read_calls(path):
    calls = [Call(line) for line in read_table(path)]
    seen = set()
    for c in calls:
        if c.name in seen:
            die('%s is in the table twice' % c.name)
        seen.add(c.name)
    return calls


def read_handles(path):
    out = []
    for line in read_table(path):
        w = line.split()
        if len(w) not in (4, 5) or w[0] not in HANDLE_KINDS or (len(w) == 5 and w[4] != 'alias'):
            die('handles: cannot read "%s"' % line)
        out.append((w[0], w[1], int(w[2]), w[3], len(w) == 5))
    names = [h[1] for h in out]
    if len(set(names)) != len(names):
        die('handles: a name is there twice')
    nums = [(h[0], h[2]) for h in out]
    if len(set(nums)) != len(nums):
        die('handles: a number is there twice')
    return out


def read_mpi_h(path):
    """The integer #defines (MPI_, and the shim's own BIP_COMM_TYPE_) and the
    arity of each MPI_ call of mpi.h."""
    text = open(path).read()
    consts = []
    for m in re.finditer(r'^#define (MPI_\w+|BIP_COMM_TYPE_\w+) \(?(-?\d+)\)?\s*$', text,
                         re.M):
        consts.append((m.group(1), int(m.group(2))))
    text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    protos = {}
    for m in re.finditer(r'^(?:int|double|MPI_\w+) MPI_(\w+)\(([^;]*)\);', text, re.M):
        args = m.group(2).strip()
        depth, n = 0, (0 if args in ('', 'void') else 1)
        for ch in args:
            depth += ch in '(['
            depth -= ch in ')]'
            n += ch == ',' and depth == 0
        protos[m.group(1)] = n - args.endswith('...')
    return consts, protos


# --- handles.txt -> the C table ---

def gen_predef(handles, out):
    lines = ['/* Generated by lib/mpi_fortran/gen.py from lib/mpi_fortran/handles.txt. */',
             'static const struct mpi_shim_fpredef mpi_shim_fpredef[] = {']
    for kind, name, num, chandle, alias in handles:
        lines.append('\t{ %s, %d, %s, %d }, /* %s */' % (HANDLE_KINDS[kind][1], num, chandle,
                                                      int(alias), name))
    lines.append('};')
    write(out, lines)


def write(path, lines):
    with open(path, 'w') as f:
        f.write('\n'.join(lines) + '\n')


# --- calls.txt -> the C wrappers ---

def c_len(call, arg):
    """The C expression of an array's length."""
    if arg.dim.startswith('@'):
        return 'mpi_fortran_comm_size(*%s_f)' % arg.dim[1:]
    if arg.dim[0] in '<>':
        return 'mpi_fortran_degree(*%s_f, %d)' % (arg.dim[1:], arg.dim[0] == '>')
    return '*%s_f' % arg.dim


def c_wrapper(call):
    cname = 'MPI_' + call.name
    fname = call.name.lower() + '_'
    if call.returns:
        params = ', '.join('MPI_Aint *%s_f' % a.name for a in call.args) or 'void'
        cargs = ', '.join('*%s_f' % a.name for a in call.args)
        return ['%s p' % RETURNS[call.returns][0] + 'mpi_' + fname + '(%s)' % params, '{',
                '\treturn PMPI_%s(%s);' % (call.name, cargs), '}',
                'MPI_FORTRAN_ALIAS(mpi_%s);' % fname, '']
    params, hidden, decls, pre, cargs, post, cleanup = [], [], [], [], [], [], []
    needs_out = False
    for a in call.args:
        n, k = a.name, a.kind
        f = n + '_f'
        cv = n + '_c'
        if k in HANDLE_KINDS:
            ctype, kidx = HANDLE_KINDS[k]
            params.append('MPI_Fint *' + f)
            if a.array:
                decls.append('void **%s = NULL;' % cv)
                pre.append('if ((rc = mpi_fortran_handles_in(%s, %s, %s, &%s, "%s")))'
                           % (kidx, 'NULL' if a.dir == 'out' else f, c_len(call, a), cv,
                              cname))
                pre.append('\tgoto out;')
                needs_out = True
                cargs.append('(%s *)%s' % (ctype, cv))
                if a.dir == 'out':
                    post.append('if (rc == MPI_SUCCESS)')
                    post.append('\tmpi_fortran_handles_out(%s, %s, %s, %s);'
                                % (kidx, f, c_len(call, a), cv))
                elif a.dir == 'inout':
                    post.append('mpi_fortran_handles_update(%s, %s, %s, %s);'
                                % (kidx, f, c_len(call, a), cv))
                cleanup.append('free(%s);' % cv)
            elif a.dir == 'in':
                cargs.append('(%s)mpi_shim_f2c(%s, *%s)' % (ctype, kidx, f))
            elif a.dir == 'out':
                decls.append('%s %s = NULL;' % (ctype, cv))
                cargs.append('&' + cv)
                post.append('if (rc == MPI_SUCCESS)')
                post.append('\tmpi_fortran_handle_out(%s, %s, %s);' % (kidx, f, cv))
            else:
                decls.append('%s %s = (%s)mpi_shim_f2c(%s, *%s);' % (ctype, cv, ctype, kidx, f))
                cargs.append('&' + cv)
                post.append('mpi_fortran_handle_update(%s, %s, %s);' % (kidx, f, cv))
        elif k == 'int':
            params.append('MPI_Fint *' + f)
            if a.array:
                cargs.append('(void *)' + f)
            else:
                cargs.append(('*' + f) if a.dir == 'in' else f)
        elif k == 'bool' and a.array:
            # gfortran's LOGICAL is a C int, .true. 1: passed as is, and
            # an output made 0 or 1.
            params.append('MPI_Fint *' + f)
            cargs.append('(int *)' + f)
            if a.dir != 'in':
                post.append('if (rc == MPI_SUCCESS)')
                post.append('\tmpi_fortran_bools_out(%s, %s);' % (f, c_len(call, a)))
        elif k == 'weights':
            params.append('MPI_Fint *' + f)
            cargs.append('mpi_fortran_weights(%s)' % f)
        elif k == 'errcodes':
            params.append('MPI_Fint *' + f)
            cargs.append('mpi_fortran_errcodes(%s)' % f)
        elif k == 'bool':
            params.append('MPI_Fint *' + f)
            if a.dir == 'in':
                cargs.append('*%s != 0' % f)
            else:
                decls.append('int %s = 0;' % cv)
                cargs.append('&' + cv)
                post.append('*%s = %s != 0;' % (f, cv))
        elif k in ('aint', 'count', 'off'):
            ctype = {'aint': 'MPI_Aint', 'count': 'MPI_Count', 'off': 'MPI_Offset'}[k]
            params.append('%s *%s' % (ctype, f))
            cargs.append(('*' + f) if a.dir == 'in' and not a.array else f)
        elif k == 'iaint':
            params.append('MPI_Fint *' + f)
            if a.array:
                decls.append('MPI_Aint *%s = NULL;' % cv)
                pre.append('if ((rc = mpi_fortran_iaints_in(%s, %s, &%s, "%s")))'
                           % (f, c_len(call, a), cv, cname))
                pre.append('\tgoto out;')
                needs_out = True
                cargs.append(cv)
                cleanup.append('free(%s);' % cv)
            elif a.dir == 'in':
                cargs.append('(MPI_Aint)*' + f)
            else:
                decls.append('MPI_Aint %s = 0;' % cv)
                cargs.append('&' + cv)
                post.append('if (rc == MPI_SUCCESS)')
                post.append('\t*%s = (MPI_Fint)%s;' % (f, cv))
        elif k == 'buf':
            params.append('void *' + f)
            cargs.append('mpi_fortran_buf(%s)' % f)
        elif k == 'addr':
            params.append('void *' + f)
            cargs.append(f)
        elif k == 'aptr':
            params.append('MPI_Aint *' + f)
            decls.append('void *%s = NULL;' % cv)
            cargs.append('&' + cv)
            post.append('if (rc == MPI_SUCCESS)')
            post.append('\t*%s = (MPI_Aint)(intptr_t)%s;' % (f, cv))
        elif k == 'aval':
            params.append('MPI_Aint *' + f)
            cargs.append('(void *)(intptr_t)*' + f)
        elif k == 'ival':
            params.append('MPI_Fint *' + f)
            cargs.append('(void *)(intptr_t)*' + f)
        elif k == 'status':
            params.append('MPI_Fint *' + f)
            if a.array:
                decls.append('MPI_Status *%s = NULL;' % cv)
                pre.append('if ((rc = mpi_fortran_statuses_in(%s, %s, &%s, "%s")))'
                           % (f, c_len(call, a), cv, cname))
                pre.append('\tgoto out;')
                needs_out = True
                cargs.append(cv)
                post.append('mpi_fortran_statuses_out(%s, %s, %s);' % (f, c_len(call, a), cv))
                cleanup.append('mpi_fortran_statuses_free(%s, %s);' % (f, cv))
            else:
                decls.append('MPI_Status %s_s, *%s = mpi_fortran_status_in(%s, &%s_s);'
                             % (n, cv, f, n))
                cargs.append(cv)
                if a.dir != 'in':
                    post.append('mpi_fortran_status_out(%s, %s);' % (f, cv))
        elif k == 'index':
            params.append('MPI_Fint *' + f)
            decls.append('int %s = MPI_UNDEFINED;' % cv)
            cargs.append('&' + cv)
            post.append('*%s = %s >= 0 ? %s + 1 : %s;' % (f, cv, cv, cv))
        elif k == 'indices':
            params.append('MPI_Fint *' + f)
            pre.append('*%s_f = MPI_UNDEFINED;' % a.dim)
            cargs.append(f)
            post.append('mpi_fortran_indices_out(%s, *%s_f);' % (f, a.dim))
        elif k in ('str', 'istr'):
            params.append('char *' + f)
            hidden.append('size_t %s_len' % n)
            if k == 'istr' and a.dir != 'in':
                die('%s: %s: istr is input only' % (call.name, n))
            if a.dir == 'in' and a.array:
                die('%s: %s: an input array of strings is for manual calls only'
                    % (call.name, n))
            if a.dir == 'in':
                decls.append('char *%s = NULL;' % cv)
                pre.append('if ((rc = mpi_fortran_%s_in(%s, %s_len, &%s, "%s")))'
                           % (k, f, n, cv, cname))
                pre.append('\tgoto out;')
                needs_out = True
                cargs.append(cv)
                cleanup.append('free(%s);' % cv)
            elif a.dim in [b.name for b in call.args]:
                # The size is an argument (MPI_Info_get's valuelen).
                decls.append('char *%s = NULL;' % cv)
                pre.append('if (!(%s = calloc(*%s_f > 0 ? *%s_f + 1 : 1, 1))) {'
                           % (cv, a.dim, a.dim))
                pre.append('\trc = mpi_fortran_no_mem("%s");' % cname)
                pre.append('\tgoto out;')
                pre.append('}')
                needs_out = True
                cargs.append(cv)
                # With an output flag (MPI_Info_get), a key not found
                # leaves the variable as it was.
                found = ' && flag_c' if any(b.name == 'flag' and b.kind == 'bool' and
                                             b.dir == 'out' for b in call.args) else ''
                post.append('if (rc == MPI_SUCCESS%s)' % found)
                post.append('\tmpi_fortran_str_out(%s, %s_len, %s);' % (f, n, cv))
                cleanup.append('free(%s);' % cv)
            else:
                decls.append('char %s[%s + 1] = "";' % (cv, a.dim))
                cargs.append(cv)
                post.append('if (rc == MPI_SUCCESS)')
                post.append('\tmpi_fortran_str_out(%s, %s_len, %s);' % (f, n, cv))
        elif k in ('opfn', 'errfn', 'werrfn', 'ferrfn'):
            params.append('mpi_fortran_fn *' + f)
            ctype = {'opfn': 'MPI_User_function', 'errfn': 'MPI_Comm_errhandler_function',
                     'werrfn': 'MPI_Win_errhandler_function',
                     'ferrfn': 'MPI_File_errhandler_function'}[k]
            decls.append('%s *%s = NULL;' % (ctype, cv))
            pre.append('if ((rc = mpi_fortran_%s(%s, &%s, "%s")))' % (k, f, cv, cname))
            pre.append('\tgoto out;')
            needs_out = True
            cargs.append(cv)
        else:
            die('%s: kind %s has no C conversion' % (call.name, k))
    sig = ', '.join(params + ['MPI_Fint *ierror'] + hidden)
    body = ['void pmpi_%s(%s)' % (fname, sig), '{']
    body += ['\t' + d for d in decls]
    body.append('\tint rc;')
    body.append('')
    body += ['\t' + p for p in pre]
    body.append('\trc = PMPI_%s(%s);' % (call.name, ', '.join(cargs)))
    body += ['\t' + p for p in post]
    if needs_out:
        body.append('out:')
    body += ['\t' + c for c in cleanup]
    body.append('\t*ierror = rc;')
    body += ['}', 'MPI_FORTRAN_ALIAS(mpi_%s);' % fname, '']
    return body


def gen_c(calls, out):
    lines = ['/* Generated by lib/mpi_fortran/gen.py from lib/mpi_fortran/calls.txt:',
             ' * the Fortran calls pmpi_name_, and mpi_name_ as weak aliases of them',
             ' * (mpi_fortran.h has the helpers they use). */',
             '#include <stdint.h>', '#include <stdlib.h>', '', '#include "mpi_fortran.h"', '']
    for c in calls:
        if not c.manual:
            lines += c_wrapper(c)
    write(out, lines)


# --- Fortran declarations ---

def f_type(a):
    k = a.kind
    if k in ('int', 'iaint', 'index', 'indices', 'ival') or k in HANDLE_KINDS:
        return 'integer'
    if k == 'bool':
        return 'logical'
    if k in ('weights', 'errcodes'):
        return 'integer'
    if k in ('aint', 'aptr', 'aval'):
        return 'integer(kind=MPI_ADDRESS_KIND)'
    if k == 'count':
        return 'integer(kind=MPI_COUNT_KIND)'
    if k == 'off':
        return 'integer(kind=MPI_OFFSET_KIND)'
    if k == 'status':
        return 'integer'
    if k in ('str', 'istr', 'argv'):
        return 'character(len=*)'
    die('no Fortran type for ' + k)


def f_interface(call, prefix):
    name = prefix + call.name
    names = [a.name for a in call.args]
    out = []
    if call.returns:
        out += wrap('  %s function %s(' % (RETURNS[call.returns][1], name), names, ')')
        if call.args:
            out.append('    import')
            out.append('    implicit none')
            for a in call.args:
                out.append('    %s, intent(in) :: %s' % (f_type(a), a.name))
        out.append('  end function %s' % name)
        return out
    out += wrap('  subroutine %s(' % name, names + ['ierror'], ')')
    out.append('    import')
    out.append('    implicit none')
    for a in call.args:
        if a.kind in ('buf', 'addr'):
            out.append('    !GCC$ ATTRIBUTES NO_ARG_CHECK :: ' + a.name)
            out.append('    type(*), dimension(*) :: ' + a.name)
            continue
        if a.kind in FN_KINDS:
            out.append('    external :: ' + a.name)
            continue
        decl = f_type(a)
        if a.kind in ('index', 'indices'):
            decl += ', intent(out)'
        else:
            decl += ', intent(%s)' % a.dir
        shape = ''
        if a.kind == 'status':
            shape = '(MPI_STATUS_SIZE, *)' if a.array else '(MPI_STATUS_SIZE)'
        elif a.kind == 'argv':
            shape = '(%s, *)' % a.dim if a.dim else '(*)'
        elif a.array and (a.kind != 'str' or a.dir == 'in'):
            shape = '(*)'
        out.append('    %s :: %s%s' % (decl, a.name, shape))
    out.append('    integer, intent(out) :: ierror')
    out.append('  end subroutine %s' % name)
    return out


def wrap(head, items, tail, width=100):
    lines, cur = [], head
    for i, it in enumerate(items):
        piece = it + (', ' if i < len(items) - 1 else tail)
        if len(cur) + len(piece) > width:
            lines.append(cur.rstrip() + ' &')
            cur = '      '
        cur += piece
    if not items:
        cur += tail
    lines.append(cur)
    return lines


def constants(handles, consts):
    """(name, value) of every INTEGER PARAMETER."""
    out = [('MPI_ADDRESS_KIND', 8), ('MPI_OFFSET_KIND', 8), ('MPI_COUNT_KIND', 8),
           ('MPI_INTEGER_KIND', 4), ('MPI_STATUS_SIZE', 6), ('MPI_SOURCE', 1), ('MPI_TAG', 2),
           ('MPI_ERROR', 3)]
    out += consts
    out += [(h[1], h[2]) for h in handles]
    names = [n for n, _ in out]
    dup = set(n for n in names if names.count(n) > 1)
    if dup:
        die('constants defined twice: ' + ', '.join(sorted(dup)))
    return out


# The variables in common blocks that calls recognise by their address:
# (name, type, shape, common block); the type is an INTEGER or a CHARACTER
# of length 1 (MPI_ARGV_NULL and MPI_ARGVS_NULL, passed for arrays of
# strings), and the C definitions in fortran.c have the same sizes.
COMMONS = [('MPI_BOTTOM', 'integer', '', 'mpi_fortran_bottom'),
           ('MPI_IN_PLACE', 'integer', '', 'mpi_fortran_in_place'),
           ('MPI_STATUS_IGNORE', 'integer', '(MPI_STATUS_SIZE)', 'mpi_fortran_status_ignore'),
           ('MPI_STATUSES_IGNORE', 'integer', '(MPI_STATUS_SIZE,1)',
            'mpi_fortran_statuses_ignore'),
           ('MPI_UNWEIGHTED', 'integer', '(1)', 'mpi_fortran_unweighted'),
           ('MPI_WEIGHTS_EMPTY', 'integer', '(1)', 'mpi_fortran_weights_empty'),
           ('MPI_ARGV_NULL', 'character', '(1)', 'mpi_fortran_argv_null'),
           ('MPI_ARGVS_NULL', 'character', '(1,1)', 'mpi_fortran_argvs_null'),
           ('MPI_ERRCODES_IGNORE', 'integer', '(1)', 'mpi_fortran_errcodes_ignore')]
# Their declarations in mpif.h (fixed form too) and in the module.
COMMON_TYPES = {'integer': ('integer', 'integer'),
                'character': ('character*1', 'character(len=1)')}
# No subarrays as choice buffers; ASYNCHRONOUS buffers are the user's (MPI-3.1 17.1.7).
LOGICALS = ['MPI_SUBARRAYS_SUPPORTED', 'MPI_ASYNC_PROTECTS_NONBLOCKING']
CALLBACKS = ['MPI_COMM_NULL_COPY_FN', 'MPI_COMM_NULL_DELETE_FN', 'MPI_COMM_DUP_FN',
             'MPI_NULL_COPY_FN', 'MPI_NULL_DELETE_FN', 'MPI_DUP_FN',
             'MPI_TYPE_NULL_COPY_FN', 'MPI_TYPE_NULL_DELETE_FN', 'MPI_TYPE_DUP_FN',
             'MPI_WIN_NULL_COPY_FN', 'MPI_WIN_NULL_DELETE_FN', 'MPI_WIN_DUP_FN',
             'MPI_CONVERSION_FN_NULL']


def gen_mpif(handles, consts, calls, out):
    """mpif.h: valid in fixed form and in free form (statements in columns
    7 to 72, no continuation lines, comments with ! in column 1)."""
    lines = ['! mpif.h - the MPI shim for Fortran 77 style programs.',
             '! Generated by lib/mpi_fortran/gen.py; see mpi_shim(7).']
    for name, val in constants(handles, consts):
        lines.append('      integer %s' % name)
        lines.append('      parameter (%s=%d)' % (name, val))
    for name in LOGICALS:
        lines.append('      logical %s' % name)
        lines.append('      parameter (%s=.false.)' % name)
    for name, typ, shape, common in COMMONS:
        lines.append('      %s %s%s' % (COMMON_TYPES[typ][0], name, shape))
        lines.append('      common /%s/ %s' % (common, name))
        lines.append('      save /%s/' % common)
    for cb in CALLBACKS:
        lines.append('      external %s' % cb)
    for c in calls:
        if c.returns:
            for p in ('MPI_', 'PMPI_'):
                lines.append('      %s %s%s' % (RETURNS[c.returns][1], p, c.name.upper()))
                lines.append('      external %s%s' % (p, c.name.upper()))
    for line in lines:
        if len(line) > 72:
            die('mpif.h: line longer than 72 columns: ' + line)
    write(out, lines)


# --- MPI_SIZEOF ---

SIZEOF_TYPES = ('integer', 'real', 'complex', 'logical', 'character')


def read_kinds(text):
    """KINDS as [(type, kind)], in the order of SIZEOF_TYPES."""
    kinds = {}
    for word in text.split():
        t, _, ks = word.partition(':')
        if t not in SIZEOF_TYPES or t in kinds or \
                not all(k.isdigit() for k in ks.split(',') if k):
            die('kinds: cannot read "%s"' % word)
        kinds[t] = [int(k) for k in ks.split(',') if k]
    return [(t, k) for t in SIZEOF_TYPES for k in kinds.get(t, [])]


def sizeof_decl(t, k):
    if t == 'character':
        return 'character(kind=%d, len=*), dimension(..), intent(in) :: x' % k
    return '%s(kind=%d), dimension(..), intent(in) :: x' % (t, k)


def sizeof_interfaces(kinds):
    """The generics MPI_SIZEOF and PMPI_SIZEOF of the module: one specific
    per type and kind, its x of any rank (a scalar too)."""
    out = []
    for p in ('MPI_', 'PMPI_'):
        out.append('  interface %sSIZEOF' % p)
        for t, k in kinds:
            name = '%sSIZEOF_%s%d' % (p, t.upper(), k)
            out.append('    subroutine %s(x, size, ierror)' % name)
            out.append('      implicit none')
            out.append('      ' + sizeof_decl(t, k))
            out.append('      integer, intent(out) :: size, ierror')
            out.append('    end subroutine %s' % name)
        out.append('  end interface %sSIZEOF' % p)
    return out


def gen_sizeof(kinds, out):
    """The specifics of MPI_SIZEOF: the bytes of one element of x.  An
    element too large for a default INTEGER (a CHARACTER of 2**31 bytes
    or more) is MPI_ERR_ARG, reported by mpi_fortran_sizeof_error."""
    lines = ['! sizeof.f90 - the subroutines behind the generic MPI_SIZEOF of the mpi',
             '! module (MPI-3.1 17.1.9): the size in bytes of one element of x, any',
             '! rank.  Generated by lib/mpi_fortran/gen.py, one per type and kind',
             '! the compiler has.']
    for p in ('MPI_', 'PMPI_'):
        for t, k in kinds:
            name = '%sSIZEOF_%s%d' % (p, t.upper(), k)
            lines.append('subroutine %s(x, size, ierror)' % name)
            lines.append('  implicit none')
            lines.append('  ' + sizeof_decl(t, k))
            lines.append('  integer, intent(out) :: size, ierror')
            if t == 'character':
                lines.append('  integer(kind=8) :: bytes')
                lines.append('  bytes = storage_size(x, kind=8) / 8')
                lines.append('  if (bytes > huge(size)) then')
                lines.append('    call mpi_fortran_sizeof_error(ierror)')
                lines.append('    return')
                lines.append('  end if')
                lines.append('  size = int(bytes)')
            else:
                lines.append('  size = storage_size(x) / 8')
            lines.append('  ierror = 0  ! MPI_SUCCESS')
            lines.append('end subroutine %s' % name)
    write(out, lines)


def gen_module(handles, consts, calls, kinds, out):
    lines = ['! mpi.f90 - the mpi module of the MPI shim.',
             '! Generated by lib/mpi_fortran/gen.py; see mpi_shim(7).',
             'module mpi',
             '  implicit none',
             '  public']
    for name, val in constants(handles, consts):
        lines.append('  integer, parameter :: %s = %d' % (name, val))
    for name in LOGICALS:
        lines.append('  logical, parameter :: %s = .false.' % name)
    for name, typ, shape, common in COMMONS:
        lines.append('  %s :: %s%s' % (COMMON_TYPES[typ][1], name, shape))
        lines.append('  common /%s/ %s' % (common, name))
        lines.append('  save :: /%s/' % common)
    lines += wrap('  external :: ', CALLBACKS, '')
    lines.append('  interface')
    for c in calls:
        for p in ('MPI_', 'PMPI_'):
            lines += f_interface(c, p)
    lines.append('  end interface')
    lines += sizeof_interfaces(kinds)
    lines.append('end module mpi')
    write(out, lines)


def main(argv):
    if len(argv) == 3 and argv[0] == 'predef':
        gen_predef(read_handles(argv[1]), argv[2])
    elif len(argv) == 9 and argv[0] == 'binding':
        calls = read_calls(argv[1])
        handles = read_handles(argv[2])
        consts, protos = read_mpi_h(argv[3])
        for c in calls:
            if c.name not in protos:
                die('%s is not a call of mpi.h' % c.name)
            # The hand-written wrappers may differ (MPI_Init has no argc in Fortran).
            if not c.manual and len(c.args) != protos[c.name]:
                die('%s: %d arguments in the table, %d in mpi.h' % (c.name, len(c.args),
                                                                   protos[c.name]))
        gen_c(calls, argv[4])
        gen_mpif(handles, consts, calls, argv[5])
        kinds = read_kinds(argv[8])
        gen_module(handles, consts, calls, kinds, argv[6])
        gen_sizeof(kinds, argv[7])
    elif len(argv) == 3 and argv[0] == 'coverage':
        names = set(c.name for c in read_calls(argv[1]))
        _, protos = read_mpi_h(argv[2])
        missing = []
        for p in sorted(protos):
            if p not in names and p not in NOT_BOUND:
                print('MPI_%s has no line in calls.txt' % p)
                missing.append(p)
        for p, why in sorted(NOT_BOUND.items()):
            if p not in protos:
                print('MPI_%s is left out (%s) but is no call of mpi.h' % (p, why))
                missing.append(p)
            elif p in names:
                print('MPI_%s is left out (%s) but is in calls.txt' % (p, why))
                missing.append(p)
            elif p in F08_ONLY and p[:-2] not in names:
                print('MPI_%s is left out (%s) but MPI_%s is not bound' % (p, why, p[:-2]))
                missing.append(p)
            else:
                print('MPI_%s: no Fortran binding (%s)' % (p, why))
        print('%d calls of mpi.h, %d in calls.txt, %d without Fortran binding, %d missing'
              % (len(protos), len(names), len(NOT_BOUND), len(missing)))
        return 1 if missing else 0
    else:
        die('usage: see the top of gen.py')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
