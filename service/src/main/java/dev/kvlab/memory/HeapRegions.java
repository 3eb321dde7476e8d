package dev.kvlab.memory;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;

/** The heap's region size when the collector places large arrays in whole regions (G1). */
public final class HeapRegions {

    private HeapRegions() {
    }

    /** G1's region size in bytes; 0 under another collector, or when the JVM does not say. */
    public static long humongousRegionBytes() {
        try {
            HotSpotDiagnosticMXBean vm = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
            if (vm == null || !Boolean.parseBoolean(vm.getVMOption("UseG1GC").getValue())) {
                return 0;
            }
            return Long.parseLong(vm.getVMOption("G1HeapRegionSize").getValue());
        } catch (IllegalArgumentException | UnsupportedOperationException notThisVm) {
            return 0;
        }
    }
}
