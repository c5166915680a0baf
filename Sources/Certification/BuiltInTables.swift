// The shipped certification tables, compiled in, so `lockbench` finds them wherever it runs.
// A copy of firmware-tables/*.csv, byte for byte (BuiltInTablesTests checks it): when a table
// changes, paste the new file between its delimiters below.

enum BuiltInTables {
    static let files: [(name: String, text: String)] = [
        ("schlage-apple-nfc.csv", #"""
# Schlage locks and readers certified for Apple NFC (wallet) credentials.
# Transcribed from "How to Build the Schlage Employee Badge Mobile Credential iOS App"
# (last modified 01.11.2025), tables "Lock Hardware Dependencies" and "Readers & Modules
# Hardware Dependencies". Schema: firmware-tables/README.md.
kind,vendor,model,variants,published_name,hardware,first_certified,status,requires,source,note
lock,Schlage,Control B,,Schlage Control B Locks,All hardware versions support Apple NFC,04.12.00,Complete,,schlage-employee-badge-ios-guide.txt:150,
lock,Schlage,Control BM,,Schlage Control BM Locks,All hardware versions support Apple NFC,05.11.39,Complete,,schlage-employee-badge-ios-guide.txt:151,
lock,Schlage,Control,,Schlage Control Locks,Not pursuing Apple NFC Certification,n/a,n/a,,schlage-employee-badge-ios-guide.txt:152,
lock,Schlage,NDE,,Schlage NDE Locks,All hardware versions support Apple NFC,02.12.72,Complete,,schlage-employee-badge-ios-guide.txt:153,
lock,Schlage,LE,,Schlage LE Locks,All hardware versions support Apple NFC,01.07.67,Complete,,schlage-employee-badge-ios-guide.txt:154,
lock,Schlage,NDEB,,Schlage NDEB Locks,All hardware versions support Apple NFC,03.07.01,Complete,,schlage-employee-badge-ios-guide.txt:155,
lock,Schlage,LEB,,Schlage LEB Locks,All hardware versions support Apple NFC,03.07.01,Complete,,schlage-employee-badge-ios-guide.txt:156,
lock,Schlage,NDEB Si,,Schlage NDEB Si Locks,All hardware versions support Apple NFC,03.09.07,Complete,,schlage-employee-badge-ios-guide.txt:157,
lock,Schlage,LEB Si,,Schlage LEB Si Locks,All hardware versions support Apple NFC,03.09.07,Complete,,schlage-employee-badge-ios-guide.txt:158,
lock,Schlage,AD300,,Schlage AD300,Must have MT2/MTK2 Reader,AD.A.125,Complete,reader:MT2/MTK2,schlage-employee-badge-ios-guide.txt:159,
lock,Schlage,AD400,,Schlage AD400,Must have MT2/MTK2 Reader AD,AD.A.125,Complete,reader:MT2/MTK2,schlage-employee-badge-ios-guide.txt:160,"The hardware cell is published as ""Must have MT2/MTK2 Reader AD"" (a stray ""AD"" compared with AD300); kept verbatim."
reader,Schlage,RC,"RC11, RC15, RCK15","Schlage RC Reader Controller (RC11, RC15, RCK15)",All hardware versions support Apple NFC,01.08.02,In process,,schlage-employee-badge-ios-guide.txt:167-169,
reader,Schlage,MTB,"MTB11, MTB15, MTBK15","Schlage MTB Readers (MTB11, MTB15, MTBK15)",All hardware versions support Apple NFC,"60.47.14, 60.47.27",In process,,schlage-employee-badge-ios-guide.txt:170-174,"Two versions on one branch (60.47): the row reads as >= 60.47.14; see README, ""Several versions in one row""."
reader,Schlage,MT15,"MT15, MTK15, MT11, MTMS15, MTMSK15","Schlage MT15, MTK15, MT11, MTMS15, MTMSK15 Readers",All hardware versions support Apple NFC,22.02,Complete,,schlage-employee-badge-ios-guide.txt:175,
reader,Schlage,OEM200,,Schlage OEM200 Modules,All hardware versions support Apple NFC,2.01,Complete,,schlage-employee-badge-ios-guide.txt:176,
reader,Schlage,MT20,,Schlage MT20 Enrollment Readers,All hardware versions support Apple NFC,9.02,Complete,,schlage-employee-badge-ios-guide.txt:177,

"""#),
    ]
}
