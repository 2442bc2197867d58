// glibc malloc settings for the mount daemon, which decodes images of up to 100 MB on several threads.
import Glibc

enum MemoryTuning {
    /// Buffers of 1 MiB and more (decoded images, libjpeg's coefficient arrays, photo bytes being rendered)
    /// are mapped and unmapped by themselves: glibc's default threshold rises to 32 MiB after the first large
    /// free, after which such buffers stay in the heap as freed-but-resident memory. Peak RSS of a `--size
    /// 1024` mount rendering the bench's 85 wallpapers, two at a time within the render memory budget:
    /// 151–154 MB at 4 MiB, 148 at 2 MiB, 143–145 at 1 MiB, 141–142 at 256 KiB (a system call pair for every
    /// mid-sized buffer, for 2 MB). And two arenas per core instead of eight: the daemon's 30-odd threads otherwise each
    /// keep an arena of freed memory. See docs/benchmarks-resize.md.
    static func apply() {
        // mallopt is declared in <malloc.h>, which Swift's Glibc module leaves out; its C ABI is stable.
        guard let symbol = dlsym(nil, "mallopt") else { return } // nil: RTLD_DEFAULT
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
        let mmapThreshold: Int32 = -3, arenaMax: Int32 = -8 // M_MMAP_THRESHOLD, M_ARENA_MAX in <malloc.h>
        _ = mallopt(mmapThreshold, 1 << 20)
        _ = mallopt(arenaMax, Int32(2 * max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))))
    }
}
