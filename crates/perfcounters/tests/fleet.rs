//! `analyze::analyze_fleet` over the real logs of `../shared/data`: each machine's report equals
//! `analyze_pipeline` of its log alone, whatever the number of workers; the grouping rule
//! (machine, no single machine, damaged, missing).

use crate::support::shared_data;

use perfcounters::analyze::{
    analyze_fleet, analyze_pipeline, fleet_groups, AnalyzeError, FleetOptions, Interval, Rules,
};
use perfcounters::log::Pipeline;

fn logs() -> Option<Vec<String>> {
    let data = shared_data::dir("the real Windows logs")?;
    Some(
        [
            "blg/pal-vista-SamplePerfmonLog.blg",
            "blg/powershell-2003-BadCounterSamples.blg",
            "blg/tx-win8-BasicPerfCounters.blg",
            "logs/en-edt-process-DataCollector01.csv",
            "logs/en-pst-BM_Active_Load_Test.csv",
        ]
        .iter()
        .map(|f| data.join(f).display().to_string())
        .collect(),
    )
}

#[test]
fn each_machine_alone_whatever_the_workers() {
    let Some(logs) = logs() else { return };
    let pipeline = Pipeline::new(logs.iter().cloned());
    let groups = fleet_groups(&pipeline).unwrap();
    let names: Vec<(&str, bool)> = groups
        .iter()
        .map(|g| (g.machine.as_str(), g.named_after_log))
        .collect();
    // The 2003 log names several machines: a group named after its file.
    assert_eq!(
        names,
        [
            ("ZACH-PC", false),
            (logs[1].as_str(), true),
            ("GEORGIS3", false),
            ("7702-48817743", false),
            ("ATTCOREU01", false)
        ]
    );
    let rules = Rules::builtin();
    let set = vec![("ATTCOREU01:PhysicalMemory".to_owned(), "2".to_owned())];
    let mut runs = Vec::new();
    for workers in [1, 3] {
        let opts = FleetOptions {
            interval: Interval::Auto,
            set: set.clone(),
            workers,
        };
        let fleet =
            analyze_fleet(&pipeline, fleet_groups(&pipeline).unwrap(), &rules, &opts).unwrap();
        assert_eq!(fleet.len(), 5);
        for (m, log) in fleet.iter().zip(&logs) {
            assert_eq!(&m.logs, std::slice::from_ref(log));
            let own: Vec<(String, String)> = if m.machine == "ATTCOREU01" {
                vec![("PhysicalMemory".into(), "2".into())]
            } else {
                Vec::new()
            };
            let alone =
                analyze_pipeline(&Pipeline::new([log.as_str()]), &rules, Interval::Auto, &own)
                    .unwrap();
            assert_eq!(
                m.result.as_ref().unwrap().report,
                alone.report,
                "{}",
                m.machine
            );
        }
        runs.push(
            fleet
                .into_iter()
                .map(|m| m.result.unwrap().report)
                .collect::<Vec<_>>(),
        );
    }
    assert_eq!(runs[0], runs[1]);
}

#[test]
fn damaged_and_missing_inputs() {
    let Some(logs) = logs() else { return };
    let dir = std::env::temp_dir().join(format!("pc-fleet-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.blg");
    std::fs::write(&bad, &std::fs::read(&logs[2]).unwrap()[..300]).unwrap();
    let bad = bad.display().to_string();
    let pipeline = Pipeline::new([logs[0].clone(), bad.clone()]);
    let groups = fleet_groups(&pipeline).unwrap();
    assert_eq!(groups.len(), 2);
    assert_eq!(
        (groups[1].machine.as_str(), groups[1].named_after_log),
        (bad.as_str(), true)
    );
    let fleet = analyze_fleet(
        &pipeline,
        groups,
        &Rules::builtin(),
        &FleetOptions::default(),
    )
    .unwrap();
    assert!(fleet[0].result.is_ok());
    let Err(AnalyzeError::Log(e)) = &fleet[1].result else {
        panic!("{:?}", fleet[1].result)
    };
    assert_eq!(
        perfcounters::ErrorChain(e).to_string(),
        format!("{bad}: WMI_BUFFER_HEADER at offset 0: truncated: needs 560 bytes, 300 available")
    );
    // A missing file is no damaged log: the grouping fails, naming it.
    let missing = dir.join("missing.blg").display().to_string();
    let e = fleet_groups(&Pipeline::new([logs[0].clone(), missing.clone()])).unwrap_err();
    assert!(e.to_string().starts_with(&missing), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
