# The xla-cpu reference backend's helper: compiles one HLO module with the installed jaxlib's
# XLA CPU compiler, runs it once on the given arguments and writes the results back.
#
#   python xla_cpu_helper.py WORKDIR
#
# WORKDIR/request.txt (written by hlowb, replay/backends/xla/xla_cpu_backend.cc):
#   hlowb-xla-cpu-request 1
#   module module.hlo
#   ffi TARGET SYMBOL LIBRARY   a user's XLA FFI handler to register before compiling
#   devices R P                 optional: R replicas x P partitions (device d = r * P + p)
#   device D                    optional: the arg lines after it are device D's (without any
#                               device line, the args are every device's)
#   arg TYPE DIMS FILE          one line per array leaf of the parameters, in parameter order
#                               (tuple parameters flattened depth-first); TYPE is the XLA name
#                               (f32, bf16, s4, ...), DIMS "2x3" or "scalar", FILE raw
#                               little-endian row-major elements (sub-byte types one per byte)
# WORKDIR/result.txt (written last, by rename, so its presence means the helper finished):
#   hlowb-xla-cpu-result 1
#   status ok | xla_error | no_jax | unsupported_jaxlib | bad_request
#   jaxlib VERSION
#   method HOW-THE-MODULE-WAS-COMPILED
#   compile_seconds S
#   run_seconds S
#   device D                    on several devices: the leaf lines after it are device D's
#   leaf TYPE DIMS FILE         one line per array leaf of the result, depth-first
# WORKDIR/message.txt: the error text (XLA's own message for xla_error).
# WORKDIR/optimized.hlo: XLA's optimized module, when compilation succeeded.
#
# Several devices run as XLA host devices (--xla_force_host_platform_device_count); with more
# than one partition the module is compiled with SPMD partitioning on, and hlowb marks every
# instruction manually sharded so the per-device program stays as it is.
# It does not retry or cache compilations; hlowb owns timeouts.
import os
import sys
import time
import traceback

PROTOCOL = "1"


class Failure(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def dtype_table(np, ml_dtypes):
    table = {
        "pred": np.bool_, "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
        "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
        "f16": np.float16, "f32": np.float32, "f64": np.float64,
        "c64": np.complex64, "c128": np.complex128,
    }
    optional = {
        "bf16": "bfloat16", "f8e5m2": "float8_e5m2", "f8e4m3fn": "float8_e4m3fn",
        "f8e4m3b11fnuz": "float8_e4m3b11fnuz", "f8e5m2fnuz": "float8_e5m2fnuz",
        "f8e4m3fnuz": "float8_e4m3fnuz", "f8e4m3": "float8_e4m3", "f8e3m4": "float8_e3m4",
        "f8e8m0fnu": "float8_e8m0fnu", "f4e2m1fn": "float4_e2m1fn",
        "s4": "int4", "u4": "uint4", "s2": "int2", "u2": "uint2",
    }
    for name, attr in optional.items():
        if hasattr(ml_dtypes, attr):
            table[name] = getattr(ml_dtypes, attr)
    return table


def parse_dims(text):
    if text == "scalar":
        return ()
    return tuple(int(d) for d in text.split("x"))


def format_dims(shape):
    return "scalar" if len(shape) == 0 else "x".join(str(d) for d in shape)


def read_request(workdir, np, dtypes):
    path = os.path.join(workdir, "request.txt")
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise Failure("bad_request", "cannot read %s: %s" % (path, e))
    if not lines or lines[0].split() != ["hlowb-xla-cpu-request", PROTOCOL]:
        raise Failure("bad_request", "%s is not a protocol %s request" % (path, PROTOCOL))
    module_file = None
    ffi = []
    devices = (1, 1)
    device_args = {}  # device -> leaves; key None: every device's
    current = None
    for number, line in enumerate(lines[1:], start=2):
        words = line.split()
        if not words:
            continue
        if words[0] == "ffi" and len(words) >= 4:
            # ffi TARGET SYMBOL LIBRARY-PATH (the path may hold spaces)
            parts = line.split(None, 3)
            ffi.append((parts[1], parts[2], parts[3]))
        elif words[0] == "devices" and len(words) == 3:
            devices = (int(words[1]), int(words[2]))
        elif words[0] == "device" and len(words) == 2:
            current = int(words[1])
        elif words[0] == "module" and len(words) == 2:
            module_file = os.path.join(workdir, words[1])
        elif words[0] == "arg" and len(words) == 4:
            type_name, dims, name = words[1], parse_dims(words[2]), words[3]
            if type_name not in dtypes:
                raise Failure("bad_request",
                              "argument type %s has no numpy type in this Python" % type_name)
            dtype = np.dtype(dtypes[type_name])
            data = np.fromfile(os.path.join(workdir, name), dtype=dtype)
            count = 1
            for d in dims:
                count *= d
            if data.size != count:
                raise Failure("bad_request", "%s holds %d elements, not %d" %
                              (name, data.size, count))
            device_args.setdefault(current, []).append(data.reshape(dims))
        else:
            raise Failure("bad_request", "%s:%d: cannot read '%s'" % (path, number, line))
    if module_file is None:
        raise Failure("bad_request", "%s names no module" % path)
    with open(module_file, encoding="utf-8") as f:
        return f.read(), device_args, ffi, devices


def device_count_from_request(workdir):
    """R * P from request.txt's devices line (read before jax is imported); 1 without one."""
    try:
        with open(os.path.join(workdir, "request.txt"), encoding="utf-8") as f:
            for line in f:
                words = line.split()
                if len(words) == 3 and words[0] == "devices":
                    return int(words[1]) * int(words[2])
    except (OSError, ValueError):
        pass
    return 1


def register_ffi_handlers(handlers, jax):
    """Registers the user's FFI handlers (target, symbol, library) for XLA's CPU platform."""
    if not handlers:
        return
    import ctypes
    ffi_module = getattr(jax, "ffi", None)
    if ffi_module is None or not hasattr(ffi_module, "register_ffi_target"):
        try:
            from jax.extend import ffi as ffi_module
        except ImportError:
            raise Failure("unsupported_jaxlib",
                          "this jax has no jax.ffi.register_ffi_target for FFI handlers")
    libraries = {}
    for target, symbol, path in handlers:
        try:
            lib = libraries.get(path) or ctypes.cdll.LoadLibrary(path)
            libraries[path] = lib
            capsule = ffi_module.pycapsule(getattr(lib, symbol))
            ffi_module.register_ffi_target(target, capsule, platform="cpu")
        except Exception as e:
            raise Failure("xla_error", "cannot register FFI handler %s from %s for %s: %s" %
                          (symbol, path, target, e))


def compile_module(text, jax, jaxlib_version, devices=(1, 1)):
    """Returns (executable, device list, method). Tries the APIs that jaxlib releases offered."""
    from jax._src.lib import xla_client as xc
    replicas, partitions = devices
    count = replicas * partitions
    cpu_devices = jax.devices("cpu")
    if len(cpu_devices) < count:
        raise Failure("xla_error", "XLA offers %d host devices; the run needs %d" %
                      (len(cpu_devices), count))
    device_list = cpu_devices[:count]
    device = device_list[0]
    client = device.client
    api_errors = []

    # HLO text -> HloModule.
    parse = None
    for owner in (getattr(xc, "hlo", None), getattr(xc, "_xla", None)):
        if owner is not None and hasattr(owner, "hlo_module_from_text"):
            parse = owner.hlo_module_from_text
            break
    if parse is None:
        raise Failure("unsupported_jaxlib",
                      "jaxlib %s offers no hlo_module_from_text (looked in xla_client.hlo and "
                      "xla_client._xla); hlowb's xla-cpu helper targets jaxlib 0.10.2"
                      % jaxlib_version)
    try:
        hlo_module = parse(text)
    except Exception as e:  # XLA's parser reports through its runtime error type.
        raise Failure("xla_error", str(e))
    proto = hlo_module.as_serialized_hlo_module_proto()

    # Newer jaxlib: StableHLO through compile_and_load on a device list.
    to_stablehlo = None
    try:
        from jax._src.lib import _jax
        to_stablehlo = _jax.mlir.hlo_to_stablehlo
    except (ImportError, AttributeError) as e:
        api_errors.append("_jax.mlir.hlo_to_stablehlo: %s" % e)
        mlir_mod = getattr(getattr(xc, "_xla", None), "mlir", None)
        if mlir_mod is not None and hasattr(mlir_mod, "hlo_to_stablehlo"):
            to_stablehlo = mlir_mod.hlo_to_stablehlo
    if to_stablehlo is not None:
        try:
            stablehlo = to_stablehlo(proto)
        except (TypeError, AttributeError) as e:
            api_errors.append("hlo_to_stablehlo: %s" % e)
            stablehlo = None
        except Exception as e:
            raise Failure("xla_error", str(e))
        if stablehlo is not None:
            options = xc.CompileOptions()
            if count > 1:
                import numpy as np
                build = options.executable_build_options
                build.num_replicas = replicas
                build.num_partitions = partitions
                build.use_spmd_partitioning = partitions > 1
                build.device_assignment = xc.DeviceAssignment.create(
                    np.array([[d.id for d in device_list[r * partitions:(r + 1) * partitions]]
                              for r in range(replicas)]))
            attempts = []
            if hasattr(client, "compile_and_load") and hasattr(xc, "DeviceList"):
                attempts.append(("compile_and_load(stablehlo)", lambda: client.compile_and_load(
                    stablehlo, xc.DeviceList(tuple(device_list)), options)))
            if count > 1:
                attempts = attempts[:1]
            elif hasattr(client, "compile"):
                if hasattr(xc, "DeviceList"):
                    attempts.append(("compile(stablehlo, devices)", lambda: client.compile(
                        stablehlo, xc.DeviceList((device,)), options)))
                attempts.append(("compile(stablehlo)", lambda: client.compile(stablehlo,
                                                                               options)))
            for method, attempt in attempts:
                try:
                    executable = attempt()
                except (TypeError, AttributeError) as e:
                    api_errors.append("%s: %s" % (method, e))
                    continue
                except Exception as e:
                    raise Failure("xla_error", str(e))
                if not hasattr(executable, "execute") and not hasattr(executable,
                                                                      "execute_sharded"):
                    api_errors.append("%s: returned an unloaded executable" % method)
                    continue
                return executable, device_list, method

    if count > 1:
        raise Failure("unsupported_jaxlib",
                      "jaxlib %s: several devices need compile_and_load on a device list:\n  %s"
                      % (jaxlib_version, "\n  ".join(api_errors)))
    # Older jaxlib: an XlaComputation straight into the client's compile.
    if hasattr(xc, "XlaComputation") and hasattr(client, "compile"):
        try:
            computation = xc.XlaComputation(proto)
            return client.compile(computation, xc.CompileOptions()), device_list, \
                "compile(XlaComputation)"
        except (TypeError, AttributeError) as e:
            api_errors.append("compile(XlaComputation): %s" % e)
        except Exception as e:
            raise Failure("xla_error", str(e))

    raise Failure("unsupported_jaxlib",
                  "jaxlib %s: none of the compile APIs hlowb knows fits:\n  %s" %
                  (jaxlib_version, "\n  ".join(api_errors)))


def execute(executable, device_list, device_args, jax, np):
    """Runs once; returns, per device, the flat list of numpy results, and the run time."""
    count = len(device_list)
    if count == 1:
        buffers = [jax.device_put(a, device_list[0]) for a in device_args.get(None) or
                   device_args.get(0, [])]
    else:
        from jax.sharding import Mesh, NamedSharding, PartitionSpec
        # Each parameter as a global array of its per-device values: "replicated" only in
        # name (the executable takes every device's buffer as that device's argument).
        sharding = NamedSharding(Mesh(np.array(device_list), ("devices",)), PartitionSpec())
        per_device = [device_args.get(d, device_args.get(None, [])) for d in range(count)]
        buffers = []
        for p in range(len(per_device[0])):
            shards = [jax.device_put(per_device[d][p], device_list[d]) for d in range(count)]
            buffers.append(jax.make_array_from_single_device_arrays(
                per_device[0][p].shape, sharding, shards))
    start = time.perf_counter()
    if hasattr(executable, "execute_sharded"):
        results = executable.execute_sharded(buffers)
        per_output = results.disassemble_into_single_device_arrays()
    else:
        per_output = [[o] for o in executable.execute(buffers)]
    for arrays in per_output:
        for a in arrays:
            a.block_until_ready()
    seconds = time.perf_counter() - start
    index = {d.id: i for i, d in enumerate(device_list)}
    outputs = [[None] * len(per_output) for _ in range(count)]
    for k, arrays in enumerate(per_output):
        if len(arrays) != count:
            raise Failure("xla_error", "output %d came back from %d devices, not %d" %
                          (k, len(arrays), count))
        for position, a in enumerate(arrays):
            devices = list(a.devices()) if hasattr(a, "devices") else []
            d = index.get(devices[0].id, position) if len(devices) == 1 else position
            outputs[d][k] = np.asarray(a)
    return outputs, seconds


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: xla_cpu_helper.py WORKDIR\n")
        return 2
    workdir = sys.argv[1]
    result = ["hlowb-xla-cpu-result " + PROTOCOL]
    count = device_count_from_request(workdir)
    # By default XLA may skip the roundings to bf16 and f16 that the module asks for between
    # instructions (--xla_allow_excess_precision). A reference rounds where the module says,
    # as the interpreter does; a setting of the user's own in XLA_FLAGS wins.
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_allow_excess_precision" not in flags:
        os.environ["XLA_FLAGS"] = flags + " --xla_allow_excess_precision=false"
    if count > 1:
        # Host devices must be asked for before jax starts its CPU client.
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                                   " --xla_force_host_platform_device_count=%d" % count)

    def finish(status, message=""):
        if message:
            write_atomic(os.path.join(workdir, "message.txt"), message)
        write_atomic(os.path.join(workdir, "result.txt"),
                     "\n".join([result[0], "status " + status] + result[1:]) + "\n")
        return 0

    try:
        import numpy as np
        import ml_dtypes
        import jax
        import jaxlib
    except ImportError as e:
        return finish("no_jax", "%s cannot import jax (%s)" % (sys.executable, e))
    # 64-bit arguments must reach XLA as they are, not narrowed the way jax does by default.
    try:
        jax.config.update("jax_enable_x64", True)
    except Exception:
        pass
    version = getattr(jaxlib, "__version__", None) or getattr(
        getattr(jaxlib, "version", None), "__version__", "unknown")
    result.append("jaxlib " + version)
    try:
        dtypes = dtype_table(np, ml_dtypes)
        names = {np.dtype(t): n for n, t in dtypes.items()}
        text, device_args, ffi, devices = read_request(workdir, np, dtypes)
        register_ffi_handlers(ffi, jax)
        start = time.perf_counter()
        executable, device_list, method = compile_module(text, jax, version, devices)
        compile_seconds = time.perf_counter() - start
        result.append("method " + method)
        result.append("compile_seconds %.9f" % compile_seconds)
        try:
            optimized = "\n\n".join(m.to_string() for m in executable.hlo_modules())
            write_atomic(os.path.join(workdir, "optimized.hlo"), optimized)
        except Exception:  # The optimized text is a courtesy; results matter more.
            pass
        try:
            outputs, run_seconds = execute(executable, device_list, device_args, jax, np)
        except Exception as e:
            raise Failure("xla_error", str(e))
        result.append("run_seconds %.9f" % run_seconds)
        leaf_number = 0
        for d, device_outputs in enumerate(outputs):
            if len(outputs) > 1:
                result.append("device %d" % d)
            for i, out in enumerate(device_outputs):
                out = np.asarray(out, order="C")  # ascontiguousarray would make scalars 1-d
                if out.dtype not in names:
                    raise Failure("xla_error", "result %d has dtype %s, which hlowb cannot read"
                                  % (i, out.dtype))
                name = "result%d.bin" % leaf_number
                leaf_number += 1
                out.tofile(os.path.join(workdir, name))
                result.append("leaf %s %s %s" % (names[out.dtype], format_dims(out.shape), name))
        return finish("ok")
    except Failure as f:
        return finish(f.status, f.message)
    except Exception:
        return finish("xla_error", traceback.format_exc())


if __name__ == "__main__":
    sys.exit(main())
