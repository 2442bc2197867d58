// The walk's mount boundaries: which file system a device number is, read from a mountinfo table (proc(5)).
@testable import FolderImport
import XCTest

final class MountBoundariesTests: XCTestCase {
    static let table = """
        22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
        23 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
        24 22 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:2 - sysfs sysfs rw
        51 22 0:45 / /home/ann/Photos rw,nosuid,nodev,relatime shared:30 - fuse.photofs photos.sqlite rw,user_id=0
        52 22 0:46 / /home/ann/My\\040NAS rw,relatime shared:31 - fuse.sshfs nas:/photos rw
        53 22 259:65539 / /mnt/big rw,relatime shared:32 - ext4 /dev/nvme0n1p3 rw
        """

    /// glibc's dev_t: major in bits 8–19 and 32–63, minor in bits 0–7 and 20–31.
    static func device(major: UInt64, minor: UInt64) -> UInt64 {
        (major & 0xFFF) << 8 | (major & ~UInt64(0xFFF)) << 32 | minor & 0xFF | (minor & ~UInt64(0xFF)) << 12
    }

    func testTheMountOfADeviceGivesItsType() {
        func type(_ major: UInt64, _ minor: UInt64) -> String? {
            MountBoundaries.fileSystemType(ofDevice: Self.device(major: major, minor: minor), mountInfo: Self.table)
        }
        XCTAssertEqual(type(8, 1), "ext4")
        XCTAssertEqual(type(0, 21), "proc")
        XCTAssertEqual(type(0, 45), "fuse.photofs")
        XCTAssertEqual(type(0, 46), "fuse.sshfs")
        XCTAssertEqual(type(259, 65539), "ext4", "a minor above 255")
        XCTAssertNil(type(0, 99))
        XCTAssertNil(MountBoundaries.fileSystemType(ofDevice: 1, mountInfo: "garbage\n\n1 2 3"))
    }

    func testTheKernelsFileSystemsAreNotWalked() throws {
        // This machine's own /proc (every Linux has one mounted there).
        var info = stat()
        XCTAssertEqual(stat("/proc", &info), 0)
        XCTAssertEqual(MountBoundaries.reasonNotToWalk(device: UInt64(info.st_dev)), "the kernel's proc, not photos")
        XCTAssertEqual(stat(NSTemporaryDirectory(), &info), 0)
        XCTAssertNil(MountBoundaries.reasonNotToWalk(device: UInt64(info.st_dev)))
    }
}
