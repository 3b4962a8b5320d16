//! PAL's threshold files, built in: the text of each of the 72 files of PAL's repository
//! (`PAL2/PALWizard/bin/Debug/*.xml`, MIT: [`PAL_LICENSE`] is the notice covering them all), looked up
//! by file name.
//!
//! A leaf module: the data and the lookup by name, nothing else of the crate. Reading them is
//! [`super::rules`]'s work, the catalogue shown by `analyze --list-rules` [`super::catalogue`]'s.

/// PAL's licence, covering every built-in threshold file (`pal/LICENSE`).
pub const PAL_LICENSE: &str = include_str!("pal/LICENSE");

/// PAL's `QuickSystemOverview.xml`, the rules used when none are named.
pub const QUICK_SYSTEM_OVERVIEW: &str = include_str!("pal/QuickSystemOverview.xml");

/// One built-in threshold file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuiltinRules {
    /// The file's name in PAL's repository (`SQLServer2014.xml`).
    pub file: &'static str,
    /// The file's text (UTF-8 with a byte-order mark, as PAL ships it).
    pub text: &'static str,
}

const fn file(file: &'static str, text: &'static str) -> BuiltinRules {
    BuiltinRules { file, text }
}

/// Every built-in threshold file, in the order of their names ignoring case.
///
/// A `static`, not a `const`: a constant is copied where it is used, and each copy of these
/// 4.9 MB of text could stay in the binary.
pub static BUILTIN_RULES: &[BuiltinRules] = &[
    file(
        "ActiveDirectory.xml",
        include_str!("pal/ActiveDirectory.xml"),
    ),
    file("Asp.xml", include_str!("pal/Asp.xml")),
    file("AspDotNet.xml", include_str!("pal/AspDotNet.xml")),
    file(
        "BizTalkServer2006.xml",
        include_str!("pal/BizTalkServer2006.xml"),
    ),
    file("CalculatedIops.xml", include_str!("pal/CalculatedIops.xml")),
    file("CitrixXenApp.xml", include_str!("pal/CitrixXenApp.xml")),
    file("Custom.xml", include_str!("pal/Custom.xml")),
    file("DotNet.xml", include_str!("pal/DotNet.xml")),
    file("DynamicsAX.xml", include_str!("pal/DynamicsAX.xml")),
    file(
        "DynamicsAX2012AOS.xml",
        include_str!("pal/DynamicsAX2012AOS.xml"),
    ),
    file(
        "DynamicsCRM2013_BackEnd_Basic.xml",
        include_str!("pal/DynamicsCRM2013_BackEnd_Basic.xml"),
    ),
    file(
        "DynamicsCRM2013_FrontEnd_Basic.xml",
        include_str!("pal/DynamicsCRM2013_FrontEnd_Basic.xml"),
    ),
    file(
        "DynamicsCRM2013_FullServer_Basic.xml",
        include_str!("pal/DynamicsCRM2013_FullServer_Basic.xml"),
    ),
    file("EMRA.xml", include_str!("pal/EMRA.xml")),
    file("Exchange.xml", include_str!("pal/Exchange.xml")),
    file("Exchange2003.xml", include_str!("pal/Exchange2003.xml")),
    file(
        "Exchange2007-CAS-TechNet.xml",
        include_str!("pal/Exchange2007-CAS-TechNet.xml"),
    ),
    file(
        "Exchange2007-CAS.xml",
        include_str!("pal/Exchange2007-CAS.xml"),
    ),
    file(
        "Exchange2007-Common-TechNet.xml",
        include_str!("pal/Exchange2007-Common-TechNet.xml"),
    ),
    file(
        "Exchange2007-EDGE-TechNet.xml",
        include_str!("pal/Exchange2007-EDGE-TechNet.xml"),
    ),
    file(
        "Exchange2007-HUB-TechNet.xml",
        include_str!("pal/Exchange2007-HUB-TechNet.xml"),
    ),
    file(
        "Exchange2007-HUB.xml",
        include_str!("pal/Exchange2007-HUB.xml"),
    ),
    file(
        "Exchange2007-HUBCAS-TechNet.xml",
        include_str!("pal/Exchange2007-HUBCAS-TechNet.xml"),
    ),
    file(
        "Exchange2007-HUBCAS.xml",
        include_str!("pal/Exchange2007-HUBCAS.xml"),
    ),
    file(
        "Exchange2007-HUBCASMBX-TechNet.xml",
        include_str!("pal/Exchange2007-HUBCASMBX-TechNet.xml"),
    ),
    file(
        "Exchange2007-HUBMBX-TechNet.xml",
        include_str!("pal/Exchange2007-HUBMBX-TechNet.xml"),
    ),
    file(
        "Exchange2007-MBX-TechNet.xml",
        include_str!("pal/Exchange2007-MBX-TechNet.xml"),
    ),
    file(
        "Exchange2007-MBX.xml",
        include_str!("pal/Exchange2007-MBX.xml"),
    ),
    file(
        "Exchange2007-UM-TechNet.xml",
        include_str!("pal/Exchange2007-UM-TechNet.xml"),
    ),
    file("Exchange2010.xml", include_str!("pal/Exchange2010.xml")),
    file("Exchange2013.xml", include_str!("pal/Exchange2013.xml")),
    file("Exchange2016.xml", include_str!("pal/Exchange2016.xml")),
    file("FS4SP.xml", include_str!("pal/FS4SP.xml")),
    file("HyperV.xml", include_str!("pal/HyperV.xml")),
    file("HyperV30.xml", include_str!("pal/HyperV30.xml")),
    file("ICIPThresholds.xml", include_str!("pal/ICIPThresholds.xml")),
    file("IIS.xml", include_str!("pal/IIS.xml")),
    file("logrhythm-SLF.xml", include_str!("pal/logrhythm-SLF.xml")),
    file("Lync2010-Edge.xml", include_str!("pal/Lync2010-Edge.xml")),
    file(
        "Lync2010-FrontEnd.xml",
        include_str!("pal/Lync2010-FrontEnd.xml"),
    ),
    file(
        "Lync2010-Mediation.xml",
        include_str!("pal/Lync2010-Mediation.xml"),
    ),
    file(
        "Lync2010-Monitoring_Archiving.xml",
        include_str!("pal/Lync2010-Monitoring_Archiving.xml"),
    ),
    file("Lync2010.xml", include_str!("pal/Lync2010.xml")),
    file("Lync2013-Edge.xml", include_str!("pal/Lync2013-Edge.xml")),
    file(
        "Lync2013-FrontEnd.xml",
        include_str!("pal/Lync2013-FrontEnd.xml"),
    ),
    file(
        "Lync2013-Mediation.xml",
        include_str!("pal/Lync2013-Mediation.xml"),
    ),
    file("MOSS_Search.xml", include_str!("pal/MOSS_Search.xml")),
    file(
        "OCS2007R2-Archiving.xml",
        include_str!("pal/OCS2007R2-Archiving.xml"),
    ),
    file("OCS2007R2-CWA.xml", include_str!("pal/OCS2007R2-CWA.xml")),
    file("OCS2007R2-Edge.xml", include_str!("pal/OCS2007R2-Edge.xml")),
    file(
        "OCS2007R2-Enterprise.xml",
        include_str!("pal/OCS2007R2-Enterprise.xml"),
    ),
    file(
        "OCS2007R2-Mediation.xml",
        include_str!("pal/OCS2007R2-Mediation.xml"),
    ),
    file(
        "OCS2007R2-Monitoring.xml",
        include_str!("pal/OCS2007R2-Monitoring.xml"),
    ),
    file(
        "OCS2007R2-Standard.xml",
        include_str!("pal/OCS2007R2-Standard.xml"),
    ),
    file(
        "PAL_VMwareView_PCoIP.xml",
        include_str!("pal/PAL_VMwareView_PCoIP.xml"),
    ),
    file(
        "PAL_VMwareView_VDM.xml",
        include_str!("pal/PAL_VMwareView_VDM.xml"),
    ),
    file("PowerStates.xml", include_str!("pal/PowerStates.xml")),
    file("PrintServer.xml", include_str!("pal/PrintServer.xml")),
    file("ProjectServer.xml", include_str!("pal/ProjectServer.xml")),
    file("QuickSystemOverview.xml", QUICK_SYSTEM_OVERVIEW),
    file("SharePoint.xml", include_str!("pal/SharePoint.xml")),
    file("SP2013.xml", include_str!("pal/SP2013.xml")),
    file("SPS2010.xml", include_str!("pal/SPS2010.xml")),
    file("SQLServer.xml", include_str!("pal/SQLServer.xml")),
    file(
        "SQLServer2008R2.xml",
        include_str!("pal/SQLServer2008R2.xml"),
    ),
    file("SQLServer2012.xml", include_str!("pal/SQLServer2012.xml")),
    file("SQLServer2014.xml", include_str!("pal/SQLServer2014.xml")),
    file("SystemOverview.xml", include_str!("pal/SystemOverview.xml")),
    file("TMG2010.xml", include_str!("pal/TMG2010.xml")),
    file("UAG2010.xml", include_str!("pal/UAG2010.xml")),
    file("VMWare.xml", include_str!("pal/VMWare.xml")),
    file("WindowsUpdate.xml", include_str!("pal/WindowsUpdate.xml")),
];

/// `name` without a trailing `.xml` (in any case) and surrounding spaces: how built-in files are
/// named to users (`SQLServer2014`).
pub(super) fn without_xml(name: &str) -> &str {
    let name = name.trim();
    match name.len().checked_sub(4) {
        Some(at)
            if name
                .get(at..)
                .is_some_and(|x| x.eq_ignore_ascii_case(".xml")) =>
        {
            name.get(..at).unwrap_or(name)
        }
        _ => name,
    }
}

/// The built-in file named `name`, compared ignoring case, with or without its `.xml`
/// (`SQLServer2014`, `sqlserver2014.xml`).
pub fn builtin_rules(name: &str) -> Option<&'static BuiltinRules> {
    let name = without_xml(name);
    BUILTIN_RULES
        .iter()
        .find(|b| without_xml(b.file).eq_ignore_ascii_case(name))
}
